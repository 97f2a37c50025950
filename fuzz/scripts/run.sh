#!/usr/bin/env bash
# Runs one fuzz target: scripts/run.sh <target> [seconds] (600 by default).
# Uses fuzz/dicts/<target>.dict when there is one; extra arguments go to libFuzzer.
# `expression` runs with -len_control=0 and inputs up to 20 KiB: libFuzzer's
# length control alone grew its inputs only to 335 bytes in 7 minutes, so long
# and deeply nested expressions (up to the 16 KiB limit) went unexplored.
set -euo pipefail
cd "$(dirname "$0")/.."
target="$1"; secs="${2:-600}"; shift $(( $# < 2 ? $# : 2 ))
dict=()
[ -f "dicts/$target.dict" ] && dict=("-dict=dicts/$target.dict")
len=(-max_len=4096)
[ "$target" = expression ] && len=(-max_len=20480 -len_control=0)
RUSTC_BOOTSTRAP=1 exec cargo fuzz run "$target" -- \
  -max_total_time="$secs" -rss_limit_mb=2048 "${len[@]}" -print_final_stats=1 \
  ${dict[@]+"${dict[@]}"} "$@"
