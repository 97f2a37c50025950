#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

Run from anywhere: python3 fuzz/scripts/make_seeds.py [--out DIR]

* rules_json: the `rules` list of every ratelimit-conformance case, and the
  rule sets written in the tests (JSON literals; the `extra` fields of
  ratelimit-core/src/rules/tests.rs inside that file's one-rule template).
* expression: the expressions of those rules, and the literals of the
  examples in ratelimit-core/src/expr/mod.rs and expr/tests.rs; and long,
  deeply nested expressions up to and past the 16 KiB limit
  (`--only expression-long` writes just those).
* nginx_config: the directive lines of /work/shared/seeds/004_*.txt (the
  seed's "Limits" section) when present, and the string literals of the
  nginx tests (ratelimit-core/src/nginx/tests/), each alone and, in one file,
  zone definitions followed by a level.
* request_keys: hand-made requests in the byte layout documented on
  `ratelimit_testkit::fuzz::request_from_bytes`.

File names are the SHA-1 of the content, as libFuzzer names its own.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORE = os.path.join(ROOT, "ratelimit-core")
NGINX_SEED = "/work/shared/seeds/004_1bf15e01b3f16c71.txt"
# The longest `expression` seed: past the 16 KiB limit, with a request.
LONG_MAX_LEN = 20480


def rust_literals(src):
    """The string literals of Rust source `src`, unescaped, in order."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i)
            i = n if j < 0 else j + 2
            continue
        m = re.compile(r'b?r(#*)"').match(src, i)
        if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            if j < 0:
                break
            out.append(src[m.end():j])
            i = j + len(end)
            continue
        if c == "'":
            m = re.compile(r"'(\\.[^']*|[^\\'])'").match(src, i)
            i = m.end() if m else i + 1
            continue
        if c == '"':
            buf, i = [], i + 1
            while i < n and src[i] != '"':
                if src[i] == "\\":
                    e = src[i + 1]
                    if e == "\n":
                        i += 2
                        while i < n and src[i] in " \t\n\r":
                            i += 1
                        continue
                    if e == "u":
                        j = src.index("}", i)
                        buf.append(chr(int(src[i + 3:j], 16)))
                        i = j + 1
                        continue
                    if e == "x":
                        buf.append(chr(int(src[i + 2:i + 4], 16)))
                        i += 4
                        continue
                    buf.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(e, e))
                    i += 2
                    continue
                buf.append(src[i])
                i += 1
            out.append("".join(buf))
            i += 1
            continue
        i += 1
    return out


def doc_code(path):
    """The Rust code of the ``` blocks of the `//!` and `///` docs of `path`."""
    code, inside = [], False
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        m = re.match(r"//[!/] ?(.*)", s)
        if not m:
            continue
        text = m.group(1)
        if text.startswith("```"):
            inside = not inside
            continue
        if inside:
            code.append(re.sub(r"^# ?", "", text))
    return "\n".join(code)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def is_json(text):
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def rules_seeds():
    seeds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "ratelimit-conformance/cases/*.json"))):
        seeds.append(json.dumps(json.load(open(path))["rules"], indent=1))
    # ratelimit-core/src/rules/tests.rs: `one(extra)` puts the fields after
    # an id, an expression and a key.
    for lit in rust_literals(read(os.path.join(CORE, "src/rules/tests.rs"))):
        lit = lit.strip()
        if lit.startswith("[") or lit.startswith("{"):
            if is_json(lit):
                seeds.append(lit)
        elif lit.startswith('"'):
            one = '[{"id": "r1", "expression": "true", "key": ["ip"], %s}]' % lit
            if is_json(one):
                seeds.append(one)
    sources = glob.glob(os.path.join(CORE, "tests/*.rs")) + [
        os.path.join(CORE, "src/rules/mod.rs"),
        os.path.join(CORE, "src/limiter/mod.rs"),
    ]
    for path in sorted(sources):
        text = read(path)
        for lit in rust_literals(text) + rust_literals(doc_code(path)):
            lit = lit.strip()
            if lit.startswith("[") and is_json(lit):
                seeds.append(lit)
    return seeds


def expression_seeds():
    seeds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "ratelimit-conformance/cases/*.json"))):
        for rule in json.load(open(path))["rules"]:
            if isinstance(rule.get("expression"), str):
                seeds.append(rule["expression"])
    mod = os.path.join(CORE, "src/expr/mod.rs")
    seeds += rust_literals(doc_code(mod))
    # The tests' expressions (some refused, which is as useful).
    tests = rust_literals(read(os.path.join(CORE, "src/expr/tests.rs")))
    seeds += [t for t in tests if re.search(r"[a-z_]+\.[a-z_.]+|true|false", t)]
    # Some with a request after the NUL.
    req = request_bytes(ip=(192, 0, 2, 1), method="POST", host="api.example.com",
                        path="/v1/login", query="a=1&b=%20",
                        headers=[("User-Agent", b"curl/8.0"), ("X-Api-Key", b"k1")],
                        cookies=[b"sid=abc"])
    seeds.append(b'http.request.method eq "POST" and http.host eq "api.example.com"\0' + req)
    seeds.append(b'ip.src in { 192.0.2.0/24 2001:db8::/32 }\0' + req)
    seeds.append(b'lower(http.request.headers["x-api-key"]) matches "^k[0-9]+$"\0' + req)
    return seeds


def long_expression_seeds():
    """Long and deeply nested expressions, up to the 16 KiB limit and past it
    (libFuzzer's length control alone grew `expression` inputs only to 335
    bytes; issue 27.19), each alone and with a request after the NUL."""
    field = 'http.request.uri.path'
    seeds = [
        # Flat chains near and over the limit (16,384 bytes).
        " and ".join(['http.host eq "a"'] * 780),
        " or ".join([f'{field} eq "/p{i}"' for i in range(700)]),
        " && ".join(["true"] * 2000),
        # Nesting at the limit (64) and just past it, of each kind.
        "(" * 64 + "true" + ")" * 64,
        "(" * 65 + "true" + ")" * 65,
        "not " * 64 + "true",
        "!" * 65 + "false",
        "lower(" * 64 + "http.host" + ")" * 64 + ' eq "a"',
        "(" * 32 + " or ".join(["(not false and true)"] * 200) + ")" * 32,
        # Large sets.
        "http.host in {" + " ".join(f'"h{i}.example.com"' for i in range(900)) + "}",
        "ip.src in {" + " ".join(f"10.{i // 256}.{i % 256}.0/24" for i in range(1000)) + "}",
        "ip.src in {" + ", ".join(f"2001:db8:{i:x}::/48" for i in range(800)) + "}",
        # Long strings and patterns (the pattern limit is 1,000 characters).
        f'{field} eq "' + "\\\"" * 2000 + '"',
        f'{field} matches "' + "a" * 1000 + '"',
        f'{field} matches "' + "a" * 1001 + '"',
        f'{field} matches "' + "(?:" * 60 + "a" + ")+" * 60 + '"',
        f'{field} matches "' + "|".join(f"/v{i}/[a-z]+" for i in range(120)) + '"',
        # Costly patterns that must be refused at load (issue 27.8), and the
        # realistic one that must load.
        f'{field} matches "(?:[a-z]{{1,60}}){{1,16}}z"',
        f'{field} matches "(?:a{{1,60}}){{1,16}}b"',
        f'{field} matches "^(?:/[a-z0-9_-]{{1,60}}){{1,16}}/?$"',
        " and ".join([f'{field} matches "^/[a-z]{{1,60}}/[0-9]+$"'] * 60),
    ]
    req = request_bytes(path="/" + "a" * 250, query="q=" + "b" * 200,
                        headers=[("User-Agent", b"x" * 255)])
    return seeds + [s.encode() + b"\0" + req for s in seeds]


def nginx_seeds():
    seeds = []
    if os.path.exists(NGINX_SEED):
        text = read(NGINX_SEED)
        block = []
        for line in text.splitlines():
            s = line.strip().lstrip("\u2022").strip()
            if "limit_" in s and ";" in s:
                seeds.append(s)
            if line.startswith(("limit_", "site", " ", "}")) and s:
                block.append(line)
        if block:
            seeds.append("\n".join(block) + "\n")
    for path in sorted(glob.glob(os.path.join(CORE, "src/nginx/tests/*.rs"))) + [
        os.path.join(CORE, "src/nginx/lexer.rs"),
        os.path.join(CORE, "src/nginx/parser.rs"),
    ]:
        lits = [l for l in rust_literals(read(path)) + rust_literals(doc_code(path))
                if "limit_" in l or ";" in l]
        seeds += lits
        zones = [l for l in lits if "_zone" in l]
        levels = [l for l in lits if "_zone" not in l and l.startswith("limit_")]
        for z in zones[:3]:
            for lv in levels[:6]:
                seeds.append(z + "\n" + lv)
    return seeds


def chunk(b):
    if isinstance(b, str):
        b = b.encode()
    b = b[:255]
    return bytes([len(b)]) + b


def request_bytes(ip=(203, 0, 113, 7), method="GET", host="example.com", path="/",
                  query="", cost=None, headers=(), cookies=(), claims=None,
                  country=None, asnum=None, ja4=None, locale=None, app=()):
    """The layout of `ratelimit_testkit::fuzz::request_from_bytes`."""
    flags = (len(ip) == 16) | (cost is not None) << 1 | (claims is not None) << 2
    for bit, v in ((3, country), (4, asnum), (5, ja4), (6, locale)):
        flags |= (v is not None) << bit
    out = bytes([flags]) + bytes(ip)
    for s in (method, host, path, query):
        out += chunk(s)
    if cost is not None:
        out += struct.pack("<Q", cost)
    out += bytes([len(headers)])
    for name, value in headers:
        out += chunk(name) + chunk(value)
    out += bytes([len(cookies)])
    for c in cookies:
        out += chunk(c)
    if claims is not None:
        out += bytes([len(claims)])
        for k, v in claims:
            out += chunk(k) + chunk(v)
    for v in (country, asnum, ja4, locale):
        if v is not None:
            out += chunk(v)
    out += bytes([len(app)])
    for k, v in app:
        out += chunk(k) + chunk(v)
    return out


def tail(probe="q", group=0, advance=1000, status=404):
    return chunk(probe) + bytes([group]) + struct.pack("<H", advance) + struct.pack("<H", status)


def request_seeds():
    v6 = tuple(bytes.fromhex("20010db8000000000000000000000001"))
    full = dict(
        method="POST", host="api.example.com", path="/a//b/../c/%2e%2E/d%2F",
        query="q=x%20y&q=2&sid=%zz&+a+=b+",
        headers=[("X-Tenant", b"acme"), ("x-tenant", b"second"), ("X-Probe", b"k8s"),
                 ("User-Agent", b"\xff\xfe bad utf-8")],
        cookies=[b"a=1; sid = s1 ", b"sid=s2;;=;x"],
        claims=[("sub", "user-1"), ("tenant", "t")],
        country="FR", asnum="64496", ja4="t13d1516h2_8daaf6152771", locale="fr-FR",
        app=[("user", "alice"), ("site", "example.com")],
    )
    seeds = []
    for group in range(3):
        seeds.append(request_bytes(**full) + tail("sid", group, 500, 404))
        seeds.append(request_bytes(ip=v6, **full) + tail("q", group, 0, 429))
        seeds.append(request_bytes() + tail("", group, 60000, 200))
    seeds.append(request_bytes(ip=tuple(bytes.fromhex("00000000000000000000ffff0a000001")),
                               path="/%", query="%4", cost=2) + tail("%41", 0, 1, 301))
    seeds.append(request_bytes(cost=2**64 - 1, headers=[("x-tenant", b"")], claims=[])
                 + tail("x-tenant", 0, 65535, 65535))
    seeds.append(request_bytes(path="../../..//", query="&&=&q", cookies=[b"\x00=\xff"])
                 + tail("q", 1, 0, 404))
    seeds.append(request_bytes(ip=(10, 1, 2, 3), method="HEAD", host="h",
                               headers=[("x-probe", b"k8s")]) + tail("h", 2, 1000, 404))
    return seeds


def write(out, target, seeds, max_len=4096):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    seen = set()
    for s in seeds:
        b = s.encode() if isinstance(s, str) else s
        if not b or len(b) > max_len:
            continue
        name = hashlib.sha1(b).hexdigest()
        if name in seen:
            continue
        seen.add(name)
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)
    print(f"{target}: {len(seen)} seeds", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "fuzz/corpus"))
    ap.add_argument("--only", choices=["rules_json", "expression", "expression-long",
                                       "nginx_config", "request_keys"],
                    help="write one group of seeds only (the others' corpora are shrunk)")
    args = ap.parse_args()
    groups = {
        "rules_json": lambda: write(args.out, "rules_json", rules_seeds()),
        "expression": lambda: write(args.out, "expression", expression_seeds()),
        "expression-long": lambda: write(args.out, "expression", long_expression_seeds(),
                                         max_len=LONG_MAX_LEN),
        "nginx_config": lambda: write(args.out, "nginx_config", nginx_seeds()),
        "request_keys": lambda: write(args.out, "request_keys", request_seeds()),
    }
    for name, run in groups.items():
        if args.only in (None, name):
            run()


if __name__ == "__main__":
    main()
