#!/usr/bin/env bash
# The replay's HTML report in a real browser: Debian's Chromium, headless.
#
# Writes a 30-minute access log in nginx's `main` format (the clients
# behind one load balancer, 10.0.0.2: a steady API, a login attack from
# 203.0.113.7 between minutes 8 and 14, a scraper from 198.51.100.23 from
# minute 18), replays it through two rules (a blocking login rule, a log
# rule on the API) with `--trusted-proxies 10.0.0.0/8 --report`, checks
# that the page names both rules and needs nothing from outside, and saves
# docs/img/replay-report.png (shown in docs/cli.md).
#
# Needs: chromium (apt-get install -y chromium). Exits non-zero on any
# failure.
#
# Usage: scripts/replay-report-screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
chromium_bin="${CHROMIUM:-$(command -v chromium || true)}"
[ -x "$chromium_bin" ] || { echo "error: no chromium (apt-get install -y chromium)" >&2; exit 1; }

work="$target_dir/replay-report"
rm -rf "$work" && mkdir -p "$work"
cat > "$work/rules.json" <<'JSON'
[
  {"id": "login", "expression": "http.request.uri.path eq \"/login\" and http.request.method eq \"POST\"",
   "algorithm": "sliding_window", "limit": 5, "period": "1m", "key": ["ip"], "penalty": "2m"},
  {"id": "api-shadow", "expression": "starts_with(http.request.uri.path, \"/api/\")",
   "algorithm": "token_bucket", "limit": 120, "period": "1m", "burst": 20, "key": ["ip"],
   "action": "log"}
]
JSON
python3 - "$work/access.log" <<'PY'
import sys
out = open(sys.argv[1], "w")
def line(sec, client, request, status):
    h, m, s = 10, sec // 60, sec % 60
    out.write(f'10.0.0.2 - - [01/Dec/2026:{h:02}:{m:02}:{s:02} +0000] "{request} HTTP/1.1" {status} 512 "-" "curl/8.5" "{client}"\n')
for sec in range(30 * 60):
    for c in range(6):
        if (sec + c) % 3 == 0:
            line(sec, f"192.0.2.{10 + c}", "GET /api/items", 200)
    if sec % 20 == 0:
        line(sec, "192.0.2.77", "POST /login", 200)
    if 8 * 60 <= sec < 14 * 60 and sec % 2 == 0:
        line(sec, "203.0.113.7", "POST /login", 401)
    if sec >= 18 * 60:
        for _ in range(4):
            line(sec, "198.51.100.23", "GET /api/items?page=%d" % sec, 200)
PY

cargo build -q -p ratelimit-cli
(cd "$work" && "$target_dir/debug/ratelimit" replay rules.json --log access.log --format main \
  --trusted-proxies 10.0.0.0/8 --report report.html)

for needed in "<h2>login</h2>" "<h2>api-shadow</h2>" "203.0.113.7" "198.51.100.23"; do
  grep -qF "$needed" "$work/report.html" || { echo "error: the report lacks $needed" >&2; exit 1; }
done
if grep -qE '<script|src=|href=|url\(|@import' "$work/report.html"; then
  echo "error: the report loads something from outside" >&2; exit 1
fi

"$chromium_bin" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=880,800 --screenshot="$work/replay-report.png" "file://$work/report.html" 2>/dev/null
[ -s "$work/replay-report.png" ] || { echo "error: no screenshot" >&2; exit 1; }
mkdir -p docs/img
cp "$work/replay-report.png" docs/img/replay-report.png
echo "docs/img/replay-report.png written"
