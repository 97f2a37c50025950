#!/usr/bin/env python3
"""Every public enum, and every public struct with a public field, of the
published crates is `#[non_exhaustive]`, or its docs say why not.

A type that may gain a variant or a field later must be `#[non_exhaustive]`
so that adding one is not a breaking change. A type that is complete by
nature (an error kind fixed by a protocol, a pair of coordinates) says so
in its doc comment with the phrase "Exhaustive on purpose" and a reason.

Lists each offender as `path:line: pub enum Name` and exits 1 when there
is one; exits 0 and prints the count checked otherwise.

    python3 scripts/check-non-exhaustive.py
"""

import pathlib
import re
import sys

CRATES = [
    "ratelimit-core",
    "ratelimit-tower",
    "ratelimit-valkey",
    "ratelimit-nginx",
    "ratelimit-admin",
    "ratelimit-cli",
]
MARKER = "exhaustive on purpose"
ITEM = re.compile(r"^pub (enum|struct) (\w+)", re.M)


def strip_tests(text):
    """The file without its trailing `#[cfg(test)] mod tests { ... }`."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests \{", text, re.M)
    return text[: m.start()] if m else text


def preamble(text, start):
    """The attributes and doc comments right above the item at `start`."""
    lines = text[:start].split("\n")[:-1]
    out = []
    for line in reversed(lines):
        s = line.strip()
        if s.startswith(("///", "#[", "#![")) or (out and s.startswith(("//", ")]", "]"))):
            out.append(s)
            continue
        if s and out and not s.endswith((";", "}", "{")) and not s.startswith("//"):
            # A multi-line attribute's inner line.
            out.append(s)
            continue
        break
    return "\n".join(reversed(out))


def body(text, start):
    """The item's text from `start` to the end of its fields."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        elif c == ";" and depth == 0:
            return text[start : i + 1]
        i += 1
    return text[start:]


def has_public_field(item):
    """Whether a struct's text declares a `pub` field (not `pub(crate)`)."""
    head = item.split("\n")[0]
    brace, paren = item.find("{"), item.find("(")
    if brace != -1 and (paren == -1 or brace < paren or "where" in head):
        fields = item[brace + 1 :]
        return re.search(r"^\s*pub\s", fields, re.M) is not None
    if paren != -1:
        return re.search(r"[(,]\s*pub\s", item[paren:]) is not None
    return False


def offenders(root):
    checked, found = 0, []
    for crate in CRATES:
        for path in sorted((root / crate / "src").rglob("*.rs")):
            if path.name == "tests.rs":
                continue
            text = strip_tests(path.read_text())
            for m in ITEM.finditer(text):
                kind, name = m.group(1), m.group(2)
                item = body(text, m.start())
                if kind == "struct" and not has_public_field(item):
                    continue
                checked += 1
                pre = preamble(text, m.start())
                if "#[non_exhaustive]" in pre or MARKER in pre.lower():
                    continue
                line = text[: m.start()].count("\n") + 1
                found.append(f"{path.relative_to(root)}:{line}: pub {kind} {name}")
    return checked, found


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    checked, found = offenders(root)
    for f in found:
        print(f)
    if found:
        print(
            f"{len(found)} of {checked} public enums and structs with public fields are neither "
            f'#[non_exhaustive] nor documented as "{MARKER.capitalize()}: <why>"',
            file=sys.stderr,
        )
        return 1
    print(f"non_exhaustive: {checked} public enums and structs with public fields, all marked or explained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
