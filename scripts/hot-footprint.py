#!/usr/bin/env python3
"""The code one allowed request runs, as distinct instructions and 64-byte
code lines (benches/README.md, "Where the HTTP gap lives"): what a request
fetches into a cold instruction cache, which over real HTTP (hyper, tokio
and the kernel run between two requests of one connection) is what the
layer costs, more than the number of instructions it executes.

Runs `layer_calls` (`AXUM=1 SAME=1`) under callgrind with `--dump-instr`
for the handler alone (`PLAIN=1`), tower_governor (`GOVERNOR=1`) and
ours, each at REQUESTS and twice as many requests, twice over, and
counts the instructions executed at least once a request (run at least
REQUESTS times more in the second run than in the first, in both pairs):
the request's hot path, with start-up and one-off work (quanta's clock
calibration, a loop of varying length) left out. Prints each
variant's count and its difference to the handler alone, then ours per
function over the handler alone.

Usage:
    cargo bench -p ratelimit-tower --bench layer_calls --no-run
    python3 scripts/hot-footprint.py target/release/deps/layer_calls-<hash> [REQUESTS]
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

NAME = re.compile(r"c?fn=\((\d+)\)(?: (.*))?")


def executed(binary, variant, requests, out):
    """(instruction -> times run, instruction -> function) of one run."""
    env = dict(os.environ, AXUM="1", SAME="1", REQUESTS=str(requests))
    if variant:
        env[variant] = "1"
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                    f"--callgrind-out-file={out}", binary],
                   env=env, capture_output=True, check=True)
    counts, owner, names = collections.Counter(), {}, {}
    obj, fn, addr, call_cost = None, None, 0, False
    with open(out) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("ob="):
                obj = line
            elif line.startswith(("fn=", "cfn=")):
                m = NAME.match(line)
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    fn = names.get(m.group(1), m.group(1))
            elif line.startswith("calls="):
                # The next position line is the call's inclusive cost.
                call_cost = True
            elif line[0] in "0123456789+-*":
                parts = line.split()
                a = parts[0]
                if a.startswith("0x"):
                    addr = int(a, 16)
                elif a[0] in "+-":
                    addr += int(a)
                if call_cost:
                    call_cost = False
                elif len(parts) >= 3:
                    counts[(obj, addr)] += int(parts[2])
                    owner[(obj, addr)] = fn
    return counts, owner


def grown(binary, variant, requests, tmp, pair):
    """(instruction -> function) for the instructions one pair of runs saw
    run at least once more a request: in `requests` more requests,
    `requests` times more."""
    name = os.path.join(tmp, f"{variant}-{pair}")
    one, _ = executed(binary, variant, requests, name + "-1")
    two, owner = executed(binary, variant, 2 * requests, name + "-2")
    return {k: owner[k] for k, n in two.items() if n - one.get(k, 0) >= requests}


def hot(binary, variant, requests, tmp):
    """The instructions run at least once a request in two pairs of runs.

    quanta calibrates its counter at start-up, in every variant (loading
    the rules reads `SystemClock`), for as long as its error needs: a loop
    of a different length in each process, which one pair of runs can
    mistake for per-request work. Two pairs seldom both do, and what the
    calibration's one-time initializer runs is left out by name.
    """
    a = grown(binary, variant, requests, tmp, "a")
    b = grown(binary, variant, requests, tmp, "b")
    return {k: f for k, f in a.items() if k in b and not ONCE.search(f or "")}


# One-time initializers (quanta's calibration runs in one).
ONCE = re.compile(r"OnceCell<T>::initialize|Once::call_once")


def code_lines(instrs):
    return len({(obj, a // 64) for obj, a in instrs})


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    requests = int(sys.argv[2]) if len(sys.argv) == 3 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        runs = {label: hot(sys.argv[1], variant, requests, tmp)
                for label, variant in [("handler alone", "PLAIN"),
                                       ("tower_governor", "GOVERNOR"), ("ours", None)]}
    base = runs["handler alone"]
    print("| variant | hot instructions | over the handler alone | code lines | over the handler alone |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, instrs in runs.items():
        print(f"| {label} | {len(instrs):,} | {len(instrs) - len(base):+,} "
              f"| {code_lines(instrs):,} | {code_lines(instrs) - code_lines(base):+,} |")
    ours = collections.Counter(runs["ours"].values())
    plain = collections.Counter(base.values())
    print("\nours over the handler alone, by function (hot instructions):")
    rows = sorted(((ours[f] - plain[f], f) for f in set(ours) | set(plain)), reverse=True)
    for d, f in rows:
        if abs(d) >= 8:
            print(f"{d:6d} {f[:150]}")


if __name__ == "__main__":
    main()
