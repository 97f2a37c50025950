#!/usr/bin/env python3
"""Shrinks fuzz/corpus/<target>/ to at most N files that keep its coverage.

`cargo fuzz cmin` keeps every file that adds a feature (edge hit counts
included), which leaves thousands. This asks libFuzzer for the edges and
features of every file (a merge with a control file), then picks greedily
the file that covers the most edges not yet covered (ties: more new
features, then the smaller file) until every edge is covered, and keeps
adding the best by new features up to N. `regression-*` files are always
kept, on top.

    RUSTC_BOOTSTRAP=1 cargo fuzz build <target>
    python3 fuzz/scripts/shrink_corpus.py <target> [--max 200]

Without cargo-fuzz, build the target with the same coverage instrumentation
(no sanitizer) and pass it with --binary:

    RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=/tmp/fuzz-target RUSTFLAGS="-Cpasses=sancov-module \
      -Cllvm-args=-sanitizer-coverage-level=4 \
      -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
      -Cllvm-args=-sanitizer-coverage-pc-table \
      -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
      -Cdebug-assertions -Coverflow-checks" \
      cargo build --locked --release --target x86_64-unknown-linux-gnu \
      --manifest-path fuzz/Cargo.toml --bin <target>
    python3 fuzz/scripts/shrink_corpus.py <target> \
      --binary /tmp/fuzz-target/x86_64-unknown-linux-gnu/release/<target>
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

FUZZ = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def control(binary, corpus):
    """(path, edges, features) of every file, from a libFuzzer merge."""
    with tempfile.TemporaryDirectory() as tmp:
        ctl = os.path.join(tmp, "control")
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        subprocess.run(
            [binary, "-merge=1", f"-merge_control_file={ctl}", "-rss_limit_mb=2048",
             "-max_len=4096", out, corpus],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        lines = open(ctl).read().splitlines()
    n = int(lines[0])
    paths = lines[2:2 + n]
    edges, feats = {}, {}
    for line in lines[2 + n:]:
        kind, idx, *rest = line.split()
        if kind == "FT":
            feats[int(idx)] = set(rest)
        elif kind == "COV":
            edges[int(idx)] = set(rest)
    return [(p, edges.get(i, set()), feats.get(i, set())) for i, p in enumerate(paths)]


def pick(files, limit):
    covered_e, covered_f, chosen = set(), set(), []
    left = list(files)
    for by_edges in (True, False):
        while left and len(chosen) < limit:
            def gain(f):
                return (len(f[1] - covered_e) if by_edges else 0,
                        len(f[2] - covered_f), -os.path.getsize(f[0]))
            best = max(left, key=gain)
            g = gain(best)
            if (g[0] if by_edges else g[1]) == 0:
                break
            chosen.append(best[0])
            covered_e |= best[1]
            covered_f |= best[2]
            left.remove(best)
    all_e = set().union(*(f[1] for f in files)) if files else set()
    all_f = set().union(*(f[2] for f in files)) if files else set()
    return chosen, (len(covered_e), len(all_e)), (len(covered_f), len(all_f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("--max", type=int, default=200)
    ap.add_argument("--binary", help="the target built with coverage (default: cargo fuzz's)")
    args = ap.parse_args()
    corpus = os.path.join(FUZZ, "corpus", args.target)
    binary = args.binary or os.path.join(FUZZ, "target/x86_64-unknown-linux-gnu/release",
                                         args.target)
    files = [f for f in control(binary, corpus)
             if not os.path.basename(f[0]).startswith("regression-")]
    chosen, e, f = pick(files, args.max)
    keep = set(chosen)
    for name in os.listdir(corpus):
        path = os.path.join(corpus, name)
        if path not in keep and not name.startswith("regression-"):
            os.remove(path)
    print(f"{args.target}: kept {len(chosen)} of {len(files)} files "
          f"(+ regression-*), edges {e[0]}/{e[1]}, features {f[0]}/{f[1]}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
