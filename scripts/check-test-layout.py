#!/usr/bin/env python3
"""The unit tests' layout (DEVELOPERS.md, "Where tests live"): exit 1 when a
crate's `src/` breaks it.

    python3 scripts/check-test-layout.py

In the `src/` of every ratelimit-* crate:
- no `#[path = ...]` attribute, no file named `*_tests.rs`, no `tests/`
  folder: a module's tests are `foo::tests`, in `foo/tests.rs` by the
  standard module path when they have a file of their own;
- no `#[cfg(test)]` module named `*tests` other than `tests` (one test
  module a file);
- no inline `mod tests { ... }` over 80 lines, and none in a file over 300
  lines: such tests go to `foo/tests.rs`.
"""

import importlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
blank = importlib.import_module("long-functions").blank

MAX_INLINE = 80
MAX_FILE = 300

# Files exempt from the layout while other work rewrites them: empty, every
# file follows it.
PENDING = set()

TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])")


def inline_length(text, brace):
    """Lines from the `{` at `brace` to its closing `}` (text is blanked)."""
    depth = 0
    for j in range(brace, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text.count("\n", brace, j) + 1
    return text.count("\n", brace) + 1


def problems(rel, path):
    """What is wrong with one file of a `src/`."""
    if rel.endswith("_tests.rs"):
        yield "a `*_tests.rs` file: move it to `foo/tests.rs`"
    raw = open(path, encoding="utf-8").read()
    text = blank(raw)
    if re.search(r"#\[path\s*=", text):
        yield "a `#[path]` attribute: use the standard module path"
    lines = raw.count("\n") + 1
    for m in TEST_MOD.finditer(text):
        name, body = m.group(1), m.group(2)
        if name != "tests" and name.endswith("tests"):
            yield f"test module `{name}`: name it `tests` (one a file)"
        if body == "{":
            n = inline_length(text, m.end() - 1)
            if n > MAX_INLINE:
                yield f"inline `mod {name}` of {n} lines (> {MAX_INLINE}): move it to a `tests.rs`"
            elif lines > MAX_FILE:
                yield f"inline `mod {name}` in a file of {lines} lines (> {MAX_FILE}): move it to a `tests.rs`"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found, pending = [], 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not crate.startswith("ratelimit-") or not os.path.isdir(src):
            continue
        for dirpath, dirs, files in os.walk(src):
            dirs.sort()
            if os.path.basename(dirpath) == "tests":
                found.append((os.path.relpath(dirpath, root), "a `src/**/tests/` folder"))
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, root)
                if not f.endswith(".rs"):
                    continue
                for what in problems(rel, p):
                    if rel in PENDING:
                        pending += 1
                    else:
                        found.append((rel, what))
    for rel, what in found:
        print(f"{rel}: {what}")
    print(f"{len(found)} test layout problems ({pending} more in PENDING files)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
