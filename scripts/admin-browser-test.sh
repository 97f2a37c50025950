#!/usr/bin/env bash
# The admin page in a real browser: Debian's Chromium, driven by
# playwright-core (npm; no browser download: it runs /usr/bin/chromium).
#
# Starts `examples/prometheus.rs` on a free 127.0.0.1 port (in-memory
# backend), then scripts/admin-browser-test.mjs loads /admin with the
# operator's token, sends traffic, sees the login rule's penalties and the
# log rule over its limit, lifts a penalty and flips a switch by clicking
# the page's forms, checks that a POST without the CSRF token and a
# request without the token are refused, and saves docs/img/admin.png.
#
# Needs: chromium (apt-get install -y chromium), node and npm. Installs
# playwright-core under target/browser. Exits non-zero on any failure.
#
# Usage: scripts/admin-browser-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

chromium_bin="${CHROMIUM:-$(command -v chromium || true)}"
[ -x "$chromium_bin" ] || { echo "error: no chromium (apt-get install -y chromium)" >&2; exit 1; }
command -v node >/dev/null || { echo "error: no node" >&2; exit 1; }

browser_dir="$root/target/browser"
if [ ! -d "$browser_dir/node_modules/playwright-core" ]; then
    mkdir -p "$browser_dir"
    npm install --prefix "$browser_dir" --no-audit --no-fund --silent playwright-core@1.65.1
fi

cargo build -q -p ratelimit-examples --example prometheus
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
log="$(mktemp)"
PORT="$port" ADMIN_TOKEN=operator-token "$root/target/debug/examples/prometheus" >"$log" 2>&1 &
app=$!
cleanup() { kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT
for _ in $(seq 50); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" && break
    sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" || { cat "$log" >&2; exit 1; }

NODE_PATH="$browser_dir/node_modules" CHROMIUM="$chromium_bin" \
    BASE="http://127.0.0.1:$port" SCREENSHOT="$root/docs/img/admin.png" \
    node "$root/scripts/admin-browser-test.mjs"
if ! grep -q "admin: switch flipped" "$log" || ! grep -q "admin: penalty lifted" "$log"; then
    echo "FAIL: the actions were not logged at info" >&2
    cat "$log" >&2
    exit 1
fi
echo "admin browser test: ok (log lines found; screenshot docs/img/admin.png)"
