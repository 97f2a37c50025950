#!/usr/bin/env python3
"""The import graph between a crate's source files, and its cycles.

    python3 scripts/import-graph.py [crate-dir ...]      # default: every ratelimit-* crate
    python3 scripts/import-graph.py --edges ratelimit-core

An edge a -> b means file a names an item defined in file b: through a
`use crate::..`, `use super::..` or `use self::..` statement, or a
`crate::..` / `super::..` path in code. Paths are followed through the
re-exports (`pub use`, `pub(crate) use`) of the modules they pass, to the
file that defines the item; a re-export itself is no edge. Test code is
left out: files named `tests.rs`, `*_tests.rs`, `props*.rs`, and whatever
follows a `#[cfg(test)]` line. A module's own `mod` lines are no edges.

Prints each strongly connected component of more than one file (a cycle)
and exits 1 when there is one not listed in ALLOWED (one type's `impl`
split across files on purpose).
"""

import os
import re
import sys

# Cycles kept on purpose: one type's impl split across files. Each entry is
# a crate and the sorted tuple of the cycle's files, relative to its src/.
ALLOWED = {
    # The expression parser: `impl Parser` in three files (subjects and
    # vouched names beside the grammar).
    ("ratelimit-core", ("expr/parser.rs", "expr/subject.rs", "expr/vouched.rs")),
}

TEST_FILE = re.compile(r"(^|/)(tests|[a-z_]+_tests|props[a-z_]*)\.rs$")
USE = re.compile(r"^\s*(pub(\([a-z]+\))?\s+)?use\s+([^;]+);", re.S | re.M)
INLINE = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_files(src):
    """Maps a module path (a tuple) to its file."""
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            mods[tuple(parts)] = rel
    return mods


def strip(text):
    """The code of a file without comments, strings and test code."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"#\[cfg\(test\)\][^\n]*\n[^\n]*\n", "\n", text)
    return text


def expand(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^([^{]*)\{(.*)\}$", tree)
    if not m:
        return [tree]
    head, body = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        for e in expand(p):
            out.append(head + e if e != "self" else head.rstrip(":"))
    return out


class Crate:
    def __init__(self, src):
        self.src = src
        self.mods = module_files(src)
        self.reexports = {}
        self.code = {}
        for mod, rel in self.mods.items():
            text = strip(open(os.path.join(src, rel), encoding="utf-8").read())
            self.code[mod] = text
            table = {}
            for m in USE.finditer(text):
                if not m.group(1):
                    continue
                for path in expand(m.group(3)):
                    name = path.split("::")[-1]
                    if name == "*":
                        continue
                    table[name] = self.absolute(mod, path)
            self.reexports[mod] = table

    def absolute(self, mod, path):
        """A path as segments from the crate root, or None (another crate)."""
        segs = path.split("::")
        if segs[0] == "crate":
            return segs[1:]
        base = list(mod)
        # `super` in a file module is its parent; `self` the module itself.
        while segs and segs[0] in ("super", "self"):
            if segs.pop(0) == "super":
                base = base[:-1]
        if len(segs) != len(path.split("::")):
            return base + segs
        # A path from a child module declared in this one.
        if tuple(base + segs[:1]) in self.mods:
            return base + segs
        return None

    def resolve(self, segs, seen=0):
        """The file that defines the item at `segs`."""
        if segs is None or seen > 20:
            return None
        mod = ()
        for i, s in enumerate(segs):
            if mod + (s,) in self.mods:
                mod = mod + (s,)
                continue
            target = self.reexports.get(mod, {}).get(s)
            if target is not None and target != list(mod) + [s]:
                return self.resolve(target + segs[i + 1 :], seen + 1)
            return self.mods.get(mod)
        return self.mods.get(mod)

    def edges(self):
        out = {}
        for mod, rel in self.mods.items():
            if TEST_FILE.search(rel):
                continue
            text = self.code[mod]
            targets = set()
            for m in USE.finditer(text):
                if m.group(1):
                    continue
                for path in expand(m.group(3)):
                    targets.add(self.resolve(self.absolute(mod, path)))
            body = USE.sub("", text)
            for m in INLINE.finditer(body):
                targets.add(self.resolve(self.absolute(mod, m.group(1))))
            targets.discard(None)
            targets.discard(rel)
            out[rel] = {t for t in targets if not TEST_FILE.search(t)}
        return out


def cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main(args):
    show_edges = "--edges" in args
    args = [a for a in args if a != "--edges"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    crates = args or sorted(
        d for d in os.listdir(root) if d.startswith("ratelimit-") and os.path.isdir(os.path.join(root, d, "src"))
    )
    bad = 0
    for crate in crates:
        src = os.path.join(root, crate, "src")
        edges = Crate(src).edges()
        found = cycles(edges)
        count = sum(len(t) for t in edges.values())
        print(f"{crate}: {len(edges)} files, {count} edges, {len(found)} cycles")
        if show_edges:
            for a in sorted(edges):
                for b in sorted(edges[a]):
                    print(f"  {a} -> {b}")
        for comp in found:
            allowed = (crate, comp) in ALLOWED
            bad += not allowed
            tag = "allowed" if allowed else "CYCLE"
            print(f"  {tag} ({len(comp)} files): {' '.join(comp)}")
            inner = [(a, b) for a in comp for b in sorted(edges[a]) if b in comp]
            for a, b in inner:
                print(f"      {a} -> {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
