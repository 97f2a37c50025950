#!/usr/bin/env bash
# Counts the item pages (struct, enum, trait, fn, type, constant, macro,
# ...) that `cargo doc` writes for each published crate: the size of the map
# a reader of the API docs has to hold (issue 28: ratelimit-core at most 80,
# ratelimit-nginx at most 45).
#
# A page counts when the crate's current docs link to it: the walk starts at
# the crate's index.html and follows the module pages, so a page left in
# the output folder by an older build (a module since made private) is not
# counted, as `find` alone would.
#
# Usage: scripts/doc-pages.sh [crate ...]   (default: every published crate;
#        respects CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
    crates=("$@")
else
    crates=(ratelimit-core ratelimit-tower ratelimit-valkey ratelimit-nginx ratelimit-admin ratelimit-cli)
fi
for crate in "${crates[@]}"; do
    cargo doc --quiet --no-deps --all-features -p "$crate"
done

doc_dir="${CARGO_TARGET_DIR:-target}/doc"
python3 - "$doc_dir" "${crates[@]//-/_}" <<'PY'
import os
import re
import sys

doc_dir, crates = sys.argv[1], sys.argv[2:]
ITEM = re.compile(r"(^|/)(struct|enum|trait|fn|type|constant|macro|static|union|derive|attr)\.[^/]*\.html$")
HREF = re.compile(r'href="([^"#?]+)')


def pages(crate):
    """The item pages reachable from the crate's index through its modules."""
    root = os.path.realpath(os.path.join(doc_dir, crate))
    todo, seen_modules, items = [os.path.join(root, "index.html")], set(), set()
    while todo:
        page = todo.pop()
        if page in seen_modules or not os.path.exists(page):
            continue
        seen_modules.add(page)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        for href in set(HREF.findall(html)):
            if "://" in href:
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(page), href))
            if not target.startswith(root + os.sep):
                continue  # another crate's page, or the shared static files
            rel = os.path.relpath(target, root)
            if ITEM.search(rel) and os.path.exists(target):
                items.add(rel)
            elif rel.endswith("/index.html"):
                todo.append(target)
    return items


total = 0
for crate in crates:
    n = len(pages(crate))
    total += n
    print(f"{crate:20} {n:4} item pages")
print(f"{'total':20} {total:4}")
PY
