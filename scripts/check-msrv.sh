#!/usr/bin/env bash
# Fails when a package in Cargo.lock declares a `rust-version` newer than the
# one our crates declare, or when our crates disagree: the MSRV we state must
# be one that every locked dependency builds with.
#
# Reads `cargo metadata` (the lock file as it is, no resolution, no network
# beyond what cargo already has) with python3's standard library only.
#
# Usage: scripts/check-msrv.sh
set -euo pipefail
cd "$(dirname "$0")/.."

metadata_file="$(mktemp)"
trap 'rm -f "$metadata_file"' EXIT
cargo metadata --format-version 1 --locked --offline >"$metadata_file" 2>/dev/null \
    || cargo metadata --format-version 1 --locked >"$metadata_file"

python3 - "$metadata_file" <<'PY'
import json
import sys

def version(text):
    """'1.88' or '1.88.0' as a comparable tuple (1, 88, 0)."""
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))

with open(sys.argv[1]) as f:
    meta = json.load(f)
members = set(meta["workspace_members"])
ours = {}
newer = []
for pkg in meta["packages"]:
    rv = pkg.get("rust_version")
    if pkg["id"] in members:
        if rv is None:
            print(f"error: {pkg['name']} declares no rust-version")
            sys.exit(1)
        ours[pkg["name"]] = rv
for pkg in meta["packages"]:
    rv = pkg.get("rust_version")
    if pkg["id"] not in members and rv is not None:
        newer.append((version(rv), pkg["name"], pkg["version"], rv))

declared = set(version(v) for v in ours.values())
if len(declared) != 1:
    print("error: the workspace's crates declare different rust-versions:")
    for name, rv in sorted(ours.items()):
        print(f"  {name}: {rv}")
    sys.exit(1)
msrv = declared.pop()
msrv_text = ".".join(map(str, msrv))
too_new = sorted(n for n in newer if n[0] > msrv)
if too_new:
    print(f"error: our rust-version is {msrv_text}, but Cargo.lock has packages that need more:")
    for _, name, ver, rv in too_new:
        print(f"  {name} {ver}: rust-version {rv}")
    print("raise rust-version in Cargo.toml (and the MSRV in the docs) or pin older versions")
    sys.exit(1)
top = max(newer) if newer else None
print(f"MSRV {msrv_text}: {len(newer)} locked packages declare a rust-version, "
      f"the highest is {top[1]} {top[2]} ({top[3]})" if top else f"MSRV {msrv_text}")
PY
