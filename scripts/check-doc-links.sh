#!/usr/bin/env bash
# Builds the published crates' docs as CI does (warnings denied: rustdoc
# refuses a link it cannot resolve), then fails on what rustdoc lets through:
#
# - an intra-doc link to an item of a crate whose docs were not built (such
#   as `[`Layer`]` for tower's trait under `--no-deps`): rustdoc resolves it,
#   has no page to link to, and prints the brackets, `[Layer]`, as text;
# - a relative link to a page that does not exist (the guide's links
#   between crates, `../../ratelimit_valkey/guide/...`).
#
# Only the crates' own text is read: the trait implementations at the end of
# each page quote other crates' docs (tracing's `[Span]`), which are theirs.
#
# Usage: scripts/check-doc-links.sh   (respects CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

# rustdoc links to another crate's pages only when that crate's docs are
# already in the output folder when it runs (else it prints the link as
# text), and cargo may run the crates' rustdoc in any order: so the crates
# are documented layer by layer, each after the crates it links to. On a
# fresh machine one `cargo doc` of all of them left 50 links unlinked.
layers=(
    "ratelimit-core"
    "ratelimit-tower ratelimit-valkey ratelimit-nginx"
    "ratelimit-admin ratelimit-cli"
)
for layer in "${layers[@]}"; do
    read -r -a crates <<<"$layer"
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features "${crates[@]/#/-p=}"
done

# ratelimit-cli's guide chapters (docs/cli.md, docs/production.md) still
# link the other chapters as files (rules.md, ...), dead in rustdoc: checked
# once its guide.rs gives them rustdoc targets, as ratelimit-core's does.
checked=(ratelimit-core ratelimit-tower ratelimit-valkey ratelimit-nginx ratelimit-admin)
doc_dir="${CARGO_TARGET_DIR:-target}/doc"
python3 - "$doc_dir" "${checked[@]//-/_}" <<'PY'
import os
import re
import sys

doc_dir, crates = sys.argv[1], sys.argv[2:]
# Where a page stops being its own text: the implementations of traits
# (ours and others'), auto traits and blanket implementations.
OTHERS = re.compile(r'<h2 id="(trait-implementations|synthetic-implementations|'
                    r'blanket-implementations|implementors|foreign-impls)"')
UNLINKED = re.compile(r'\[<code>[^<]{1,80}</code>\]')
HREF = re.compile(r'href="([^"#?]*)')
problems = []
for crate in crates:
    for root, _, files in os.walk(os.path.join(doc_dir, crate)):
        for name in files:
            if not name.endswith(".html"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                html = f.read()
            cut = OTHERS.search(html)
            own = html[: cut.start()] if cut else html
            rel = os.path.relpath(path, doc_dir)
            for m in UNLINKED.finditer(own):
                text = re.sub(r"<[^>]+>", "", m.group(0))
                problems.append(f"{rel}: unlinked {text} (its crate's docs are not built: link a URL)")
            for href in set(HREF.findall(own)):
                if not href or "://" in href or href.startswith(("data:", "mailto:")) or "${" in href:
                    continue
                target = os.path.normpath(os.path.join(root, href))
                if not os.path.exists(target):
                    problems.append(f"{rel}: dead link {href}")
for p in sorted(set(problems)):
    print(p)
if problems:
    sys.exit(f"{len(set(problems))} doc link problem(s)")
print(f"doc links of {', '.join(crates)}: all resolve")
PY
