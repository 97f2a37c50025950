#!/usr/bin/env bash
# Runs one fuzz target: scripts/run.sh <target> [seconds] (600 by default).
# Uses fuzz/dicts/<target>.dict when there is one; extra arguments go to libFuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
target="$1"; secs="${2:-600}"; shift $(( $# < 2 ? $# : 2 ))
dict=()
[ -f "dicts/$target.dict" ] && dict=("-dict=dicts/$target.dict")
RUSTC_BOOTSTRAP=1 exec cargo fuzz run "$target" -- \
  -max_total_time="$secs" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  ${dict[@]+"${dict[@]}"} "$@"
