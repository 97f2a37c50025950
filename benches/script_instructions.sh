#!/usr/bin/env bash
# Server instructions per EVALSHA of each Valkey script: deterministic,
# unlike wall-clock figures on a shared machine. valkey-server runs under
# valgrind's callgrind with instrumentation off; for each kind below,
# redis-benchmark sends 3 x N calls over 500 keys (at least 9,000: every
# key live, and the refused kinds over their limit of 10), then N calls with instrumentation on, and the script prints the
# instructions collected / N. The scripts are the backend's own (written
# out by `cargo bench -p ratelimit-valkey --bench script_sources`); the
# arguments are the ones the backend sends (see prelude.lua's header).
#
# Kinds: sw (sliding window, admitted), swref (refused, no penalty), swblk
# (blocked by a running penalty), fw (fixed window, admitted), tb (token
# bucket, admitted), tbref (refused), tbblk (blocked), lb (leaky bucket,
# admitted), batchsw (the batch script with two sliding windows, 2
# decisions per call), batch (a sliding window and a token bucket).
# And the commands alone, without the algorithms' Lua (`call:NAME`, the
# script benches/call_costs/NAME.lua on one key, no argument: time,
# incr, getex, set_number, set_string; see benches/README.md, "Why one
# redis.call fewer"); not in the default list.
#
# Usage: benches/script_instructions.sh [KIND...]   (default: every kind)
# Environment: N (3000 calls measured per kind).
# Needs: cargo, python3, valgrind and redis-tools (installed with apt-get
# when missing), valkey-server (scripts/install-valkey.sh).
# Runs vary by well under 1% (hash seeds, the server's own timers).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
N="${N:-3000}"
KINDS=("$@")
[[ ${#KINDS[@]} -gt 0 ]] || KINDS=(sw swref swblk fw tb tbref tbblk lb batchsw batch)

log() { echo "[script_instructions] $*" >&2; }
# apt_install, start_valkey
# shellcheck source=benches/valkey_server.sh
source benches/valkey_server.sh
missing=()
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v redis-benchmark >/dev/null 2>&1 || missing+=(redis-tools)
if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}"
    apt_install "${missing[@]}"
fi
VALKEY_SERVER="$(bash scripts/install-valkey.sh | tail -1)"

DIR="$(mktemp -d)"
log "writing the scripts to $DIR"
cargo bench -q -p ratelimit-valkey --bench script_sources -- "$DIR" >/dev/null

start_valkey 300 valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$DIR/cg.%p.out" "$VALKEY_SERVER"
log "valkey-server $("$VALKEY_SERVER" --version | cut -d' ' -f3) under callgrind, pid $SERVER_PID, port $PORT"

K='rl:{0000__rand_int__}abcdef'
K2='rl:{0000__rand_int__}ghijkl'
# The script and the keys and arguments of one kind's calls.
args() {
    case "$1" in
        sw) echo "sw 1 $K 2 1000000000 60000" ;;
        swref) echo "sw 1 $K 2 10 60000" ;;
        swblk) echo "sw 1 $K 2030000 10 60000" ;;
        fw) echo "fw 1 $K 1 1000000000 60000" ;;
        tb) echo "tb 1 $K 3 0000000010 60000000000 60000" ;;
        tbref) echo "tb 1 $K 3 0000000010 600000 60000" ;;
        tbblk) echo "tb 1 $K 3030000 0000000010 600000 60000" ;;
        lb) echo "lb 1 $K 4 0001000000 60000000000 60000" ;;
        batchsw) echo "batch 2 $K $K2 2 1000000000 60000 2 1000000000 60000" ;;
        batch) echo "batch 2 $K $K2 2 1000000000 60000 3 0000000010 60000000000 60000" ;;
        call:*)
            [[ -f "$ROOT/benches/call_costs/${1#call:}.lua" ]] || { log "no benches/call_costs/${1#call:}.lua"; exit 2; }
            echo "$ROOT/benches/call_costs/${1#call:} 1 $K" ;;
        *) log "unknown kind $1"; exit 2 ;;
    esac
}

# Every kind known before the first is measured (`args` exits on one that
# is not).
for kind in "${KINDS[@]}"; do args "$kind" >/dev/null; done
printf '| kind | instructions per EVALSHA |\n| --- | ---: |\n'
for kind in "${KINDS[@]}"; do
    read -r script keys <<<"$(args "$kind")"
    [[ "$script" == /* ]] || script="$DIR/$script"
    sha="$("${CLI[@]}" SCRIPT LOAD "$(cat "$script.lua")")"
    # shellcheck disable=SC2206
    cmd=(EVALSHA "$sha" $keys)
    bench=(redis-benchmark -h 127.0.0.1 -p "$PORT" -c 10 -P 1 -r 500 -q)
    "${CLI[@]}" FLUSHALL >/dev/null
    "${CLI[@]}" CONFIG RESETSTAT >/dev/null
    warm=$((N * 3))
    [[ $warm -ge 9000 ]] || warm=9000
    "${bench[@]}" -n "$warm" "${cmd[@]}" >/dev/null
    callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
    callgrind_control -i on "$SERVER_PID" >/dev/null 2>&1
    "${bench[@]}" -n "$N" "${cmd[@]}" >/dev/null
    callgrind_control -i off "$SERVER_PID" >/dev/null 2>&1
    rm -f "$DIR"/cg."$SERVER_PID".out*
    callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
    for _ in $(seq 50); do
        out="$(ls -t "$DIR"/cg."$SERVER_PID".out* 2>/dev/null | head -1 || true)"
        [[ -n "$out" ]] && grep -q '^totals:' "$out" && break
        sleep 0.2
    done
    total="$(grep -m1 '^totals:' "$out" | awk '{print $2}')"
    errors="$("${CLI[@]}" INFO commandstats | tr -d '\r' | sed -n 's/.*cmdstat_evalsha:.*failed_calls=\([0-9]*\).*/\1/p')"
    [[ "${errors:-0}" == 0 ]] || { log "$kind: $errors calls failed"; exit 1; }
    printf '| %s | %s |\n' "$kind" "$(python3 -c "print(f'{round($total / $N):,}')")"
done
