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
# Then the operator's workflow across a fleet: a valkey-server on a free
# port ($VALKEY_SERVER, else valkey-server on the PATH), two instances of
# `examples/admin_fleet.rs` on it (edge-1, edge-2; the rollback guard
# every second, acting from 20 requests), and
# scripts/admin-fleet-browser-test.mjs, which puts a round-robin proxy in
# front of them and, through it, drafts a rule with the form, checks it,
# publishes it (in log), sees the clients it would hit, starts a 50%
# canary, blocks for everyone, goes back to log, starts a canary again,
# floods it until the guard returns the rule to log, rolls back to
# version 1 from the history, and saves docs/img/admin-fleet.png.
#
# Needs: chromium (apt-get install -y chromium), node and npm. Installs
# playwright-core under target/browser. Exits non-zero on any failure.
#
# Usage: scripts/admin-browser-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

chromium_bin="${CHROMIUM:-$(command -v chromium || true)}"
[ -x "$chromium_bin" ] || { echo "error: no chromium (apt-get install -y chromium)" >&2; exit 1; }
command -v node >/dev/null || { echo "error: no node" >&2; exit 1; }

browser_dir="$target_dir/browser"
if [ ! -d "$browser_dir/node_modules/playwright-core" ]; then
    mkdir -p "$browser_dir"
    npm install --prefix "$browser_dir" --no-audit --no-fund --silent playwright-core@1.65.1
fi

cargo build -q -p ratelimit-examples --example prometheus --example admin_fleet
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
log="$(mktemp)"
PORT="$port" ADMIN_TOKEN=operator-token "$target_dir/debug/examples/prometheus" >"$log" 2>&1 &
app=$!
fleet_pids=()
fleet_dir=""
cleanup() {
    kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; rm -f "$log"
    for p in "${fleet_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    [ -z "$fleet_dir" ] || rm -rf "$fleet_dir"
}
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

# The fleet: two instances on one valkey-server, behind a round-robin proxy.
valkey_bin="${VALKEY_SERVER:-$(command -v valkey-server || true)}"
[ -x "$valkey_bin" ] || { echo "error: no valkey-server (set VALKEY_SERVER)" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fleet_dir="$(mktemp -d)"
vport="$(free_port)"
"$valkey_bin" --port "$vport" --bind 127.0.0.1 --save "" --appendonly no >"$fleet_dir/valkey.log" 2>&1 &
fleet_pids+=($!)
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $vport), 0.2)" 2>/dev/null && break
    sleep 0.1
done
ports=()
for i in 1 2; do
    p="$(free_port)"
    ports+=("$p")
    VALKEY_URL="redis://127.0.0.1:$vport" INSTANCE="edge-$i" PORT="$p" GUARD_EVERY_MS=1000 \
        GUARD_MIN_REQUESTS=20 "$target_dir/debug/examples/admin_fleet" >"$fleet_dir/edge-$i.log" 2>&1 &
    fleet_pids+=($!)
done
for p in "${ports[@]}"; do
    for _ in $(seq 50); do
        curl -fs -o /dev/null -H 'authorization: Bearer operator-token' "http://127.0.0.1:$p/admin/rules.json" && break
        sleep 0.1
    done
done
if ! NODE_PATH="$browser_dir/node_modules" CHROMIUM="$chromium_bin" UPSTREAMS="${ports[0]},${ports[1]}" \
    SCREENSHOT="$root/docs/img/admin-fleet.png" node "$root/scripts/admin-fleet-browser-test.mjs"; then
    tail -n 30 "$fleet_dir"/edge-*.log >&2
    exit 1
fi
fleet_logs="$(cat "$fleet_dir"/edge-*.log)"
for line in "admin: rule set published" "admin: rollback guard returned a rule to its previous version"; do
    grep -q "$line" <<<"$fleet_logs" || { echo "FAIL: no '$line' at info" >&2; exit 1; }
done
echo "admin fleet browser test: ok (screenshot docs/img/admin-fleet.png)"
