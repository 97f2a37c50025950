#!/usr/bin/env python3
"""Library functions longer than a limit (80 lines by default).

    python3 scripts/long-functions.py [--max N] [path ...]

Looks at the `src/` of every ratelimit-* crate (or the paths given),
leaving out test code: files under `tests/`, named `tests.rs`, `*_tests.rs`, `props*.rs`
and whatever follows a `#[cfg(test)]` module. A function's length is its
lines from `fn` to its closing brace. Exits 1 when one is over the limit.
"""

import os
import re
import sys

TEST_FILE = re.compile(r"(^|/)(tests/.*|(tests|[a-z_]+_tests|props[a-z_]*)\.rs)$")
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def blank(text):
    """The text with comments, strings and chars replaced by spaces (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not text[i - 1 : i].isalnum():
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i : i + 4]) or text.startswith("'\\", i):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'", text[i:])
            j = i + (len(m.group(0)) if m else 1)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = blank(open(path, encoding="utf-8").read())
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    for m in FN.finditer(text):
        # The body: the first `{` after the signature (not a `;`).
        i = m.end()
        depth_paren = 0
        while i < len(text):
            ch = text[i]
            if ch in "([<":
                depth_paren += 1
            elif ch in ")]>":
                depth_paren -= 1
            elif ch == ";" and depth_paren <= 0:
                i = -1
                break
            elif ch == "{" and depth_paren <= 0:
                break
            i += 1
        if i < 0 or i >= len(text):
            continue
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        start = text.count("\n", 0, m.start()) + 1
        end = text.count("\n", 0, j) + 1
        yield m.group(1), start, end - start + 1


def main(args):
    limit = 80
    if "--max" in args:
        k = args.index("--max")
        limit = int(args[k + 1])
        del args[k : k + 2]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = args or sorted(
        os.path.join(root, d, "src")
        for d in os.listdir(root)
        if d.startswith("ratelimit-") and os.path.isdir(os.path.join(root, d, "src"))
    )
    found = []
    for top in paths:
        for dirpath, _, files in os.walk(top):
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                if not f.endswith(".rs") or TEST_FILE.search(p):
                    continue
                for name, line, length in functions(p):
                    if length > limit:
                        found.append((length, os.path.relpath(p, root), line, name))
    for length, p, line, name in sorted(found, reverse=True):
        print(f"{length:5} {p}:{line} {name}")
    print(f"{len(found)} functions over {limit} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
