#!/usr/bin/env python3
"""The walk of one allowed request (DESIGN.md, "Path of one request"): the
source files of the workspace's crates whose instructions grow by at least
one per request between 1,000 and 2,000 requests of `layer_calls` under
callgrind (`AXUM=1 SAME=1`; inlined code counts for the file it is written
in), with the instructions each adds a request.

Usage:
    cargo bench -p ratelimit-tower --bench layer_calls --no-run
    python3 scripts/request-walk.py target/release/deps/layer_calls-<hash>
"""
import os
import re
import subprocess
import sys
import tempfile

SOURCE = re.compile(r"^-- Auto-annotated source: (.*)")
COUNT = re.compile(r"^\s*([0-9,]+)\s+(.*)$")
OURS = re.compile(r"(^|/)ratelimit-[a-z]+/src/")


def per_file(binary, requests, out):
    env = dict(os.environ, AXUM="1", SAME="1", REQUESTS=str(requests))
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary],
                   env=env, capture_output=True, check=True)
    text = subprocess.run(["callgrind_annotate", "--auto=yes", "--show-percs=no",
                           "--threshold=100", "--context=0", out],
                          capture_output=True, text=True, check=True).stdout
    files, current = {}, None
    for line in text.splitlines():
        m = SOURCE.match(line)
        if m:
            current = m.group(1)
            continue
        m = COUNT.match(line)
        if (m and current and OURS.search(current) and "/benches/" not in current
                and not m.group(2).startswith("=>")
                # The trailer after the last file's section, not a line of it.
                and m.group(2).strip() != "events annotated"):
            files[current] = files.get(current, 0) + int(m.group(1).replace(",", ""))
    return files


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        a = per_file(sys.argv[1], 1000, os.path.join(tmp, "a"))
        b = per_file(sys.argv[1], 2000, os.path.join(tmp, "b"))
    here = os.getcwd() + "/"
    rows = sorted(((b.get(f, 0) - a.get(f, 0)) / 1000, f.removeprefix(here))
                  for f in set(a) | set(b))
    rows = [(d, f) for d, f in reversed(rows) if d >= 1]
    for d, f in rows:
        print(f"{d:7.1f} {f}")
    crates = {}
    for _, f in rows:
        crate = OURS.search(f).group(0).strip("/").split("/")[0]
        crates[crate] = crates.get(crate, 0) + 1
    print(f"{len(rows)} files: " + ", ".join(f"{n} in {c}" for c, n in sorted(crates.items())))


if __name__ == "__main__":
    main()
