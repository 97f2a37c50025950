#!/usr/bin/env bash
# Checks docs/grafana/ratelimit.json against a real Prometheus scrape of
# examples/prometheus.rs, and renders its panels to docs/img/dashboard.png.
#
# On 127.0.0.1 only: a Valkey server, the example app on it, and
# Prometheus (Debian's `prometheus`, apt-get install -y prometheus)
# scraping the app every second. Traffic for 12 s, Valkey stopped for 10 s
# (fail-open, fail-closed, a breaker opening), Valkey back for 8 s, then
# `disable_config_blocking` turned on through the admin page's form for 8 s. Then
# every panel's PromQL is queried through the HTTP API and must return
# series, the outage must show, no label value may be a client's key, and
# the panels are drawn from query_range results as inline SVG and captured
# by headless Chromium (when installed; skipped with a note otherwise).
#
# Needs: prometheus, python3, curl; a valkey-server (scripts/install-valkey.sh).
# Exits non-zero on any failure. Usage: scripts/check-dashboard.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

command -v prometheus >/dev/null || { echo "error: no prometheus (apt-get install -y prometheus)" >&2; exit 1; }
valkey="$(bash scripts/install-valkey.sh | tail -n 1)"
[ -x "$valkey" ] || { echo "error: no valkey-server ($valkey)" >&2; exit 1; }
cargo build -q -p ratelimit-examples --example prometheus

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
vport="$(free_port)"; aport="$(free_port)"; pport="$(free_port)"
work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

start_valkey() {
    "$valkey" --port "$vport" --bind 127.0.0.1 --save "" --appendonly no >>"$work/valkey.log" 2>&1 &
    vpid=$!
    pids+=("$vpid")
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$vport") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "error: valkey did not start" >&2; cat "$work/valkey.log" >&2; exit 1
}
wait_http() {
    for _ in $(seq 100); do curl -fs -o /dev/null "$1" && return 0; sleep 0.2; done
    echo "error: $1 did not answer" >&2; return 1
}

start_valkey
VALKEY_URL="redis://127.0.0.1:$vport" PORT="$aport" \
    "$root/target/debug/examples/prometheus" >"$work/app.log" 2>&1 &
pids+=("$!")
wait_http "http://127.0.0.1:$aport/metrics" || { cat "$work/app.log" >&2; exit 1; }

cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ratelimit-example
    static_configs:
      - targets: ["127.0.0.1:$aport"]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=("$!")
prom="http://127.0.0.1:$pport"
wait_http "$prom/-/ready" || { cat "$work/prometheus.log" >&2; exit 1; }

base="http://127.0.0.1:$aport"
start="$(date +%s)"
python3 scripts/dashboard.py traffic "$base" 12
kill "$vpid"; wait "$vpid" 2>/dev/null || true
echo "valkey stopped"
python3 scripts/dashboard.py traffic "$base" 10
start_valkey
echo "valkey back"
python3 scripts/dashboard.py traffic "$base" 8
python3 scripts/dashboard.py flip "$base" disable_config_blocking on
python3 scripts/dashboard.py traffic "$base" 8
sleep 3 # the last scrapes
end="$(date +%s)"

python3 scripts/dashboard.py check "$prom" docs/grafana/ratelimit.json
python3 scripts/dashboard.py labels "$base/metrics"

chromium_bin="${CHROMIUM:-$(command -v chromium || true)}"
if [ -x "$chromium_bin" ]; then
    python3 scripts/dashboard.py render "$prom" docs/grafana/ratelimit.json "$start" "$end" "$work/dashboard.html"
    "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/chromium" \
        --hide-scrollbars --window-size=1380,1740 --screenshot="$root/docs/img/dashboard.png" \
        "file://$work/dashboard.html" >"$work/chromium.log" 2>&1 \
        || { cat "$work/chromium.log" >&2; exit 1; }
    echo "screenshot: docs/img/dashboard.png"
else
    echo "note: no chromium, the screenshot was not taken (apt-get install -y chromium)"
fi
echo "dashboard check: ok"
