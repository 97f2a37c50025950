//! The metrics catalog, the crates' sources and `docs/operators.md` agree:
//! every metric the crates register is listed with the labels it is
//! registered with, every listed metric is registered, and the page names
//! each one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ratelimit_admin::METRICS;

const CRATES: [&str; 5] = [
    "ratelimit-admin",
    "ratelimit-core",
    "ratelimit-tower",
    "ratelimit-nginx",
    "ratelimit-valkey",
];

/// String literals starting `ratelimit_` that are not metric names.
const NOT_METRICS: [&str; 4] = [
    "ratelimit_headers",
    // The misspelt field of the "did you mean" tests and examples.
    "ratelimit_header",
    "ratelimit_admin",
    "ratelimit_admin_csrf",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sources(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && !p.ends_with("src/metric_catalog.rs")
            && !p.ends_with("ratelimit-admin/src/catalog.rs")
        {
            out.push(std::fs::read_to_string(&p).unwrap());
        }
    }
}

fn all_sources() -> Vec<String> {
    let mut out = Vec::new();
    for c in CRATES {
        sources(&root().join(c).join("src"), &mut out);
    }
    out
}

/// `"ratelimit_…"` literals.
fn literals(src: &str) -> impl Iterator<Item = &str> {
    src.match_indices("\"ratelimit_").filter_map(|(i, _)| {
        let rest = &src[i + 1..];
        let end = rest.find('"')?;
        let lit = &rest[..end];
        lit.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            .then_some(lit)
    })
}

/// Where the macro call opened just before `s` closes.
fn closing_paren(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return i,
            ')' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

/// Metric name (when a literal) → label keys, from each `metrics::x!(…)`.
fn registrations(src: &str) -> Vec<(Option<String>, BTreeSet<String>)> {
    let mut out = Vec::new();
    for mac in [
        "metrics::counter!(",
        "metrics::gauge!(",
        "metrics::histogram!(",
    ] {
        for (i, _) in src.match_indices(mac) {
            let call = &src[i + mac.len()..];
            let call = &call[..closing_paren(call)];
            let name = call
                .trim_start()
                .strip_prefix('"')
                .and_then(|r| r.split('"').next())
                .map(str::to_owned);
            let keys = call
                .match_indices("\" =>")
                .map(|(j, _)| {
                    let before = &call[..j];
                    before[before.rfind('"').unwrap() + 1..].to_owned()
                })
                .collect();
            out.push((name, keys));
        }
    }
    out
}

#[test]
fn every_registered_metric_is_in_the_catalog_and_back() {
    let srcs = all_sources();
    let found: BTreeSet<&str> = srcs
        .iter()
        .flat_map(|s| literals(s))
        .filter(|l| !NOT_METRICS.contains(l))
        .collect();
    let listed: BTreeSet<&str> = METRICS.iter().map(|m| m.name).collect();
    assert_eq!(found, listed, "sources vs catalog");
}

#[test]
fn labels_are_the_catalogs_and_bounded() {
    let catalog: BTreeMap<&str, BTreeSet<String>> = METRICS
        .iter()
        .map(|m| (m.name, m.labels.iter().map(|l| l.to_string()).collect()))
        .collect();
    let bounded = [
        "rule",
        "switch",
        "outcome",
        "status_class",
        "status",
        "module",
        "kind",
        "node",
        "result",
        "event",
    ];
    let mut seen = 0;
    for src in all_sources() {
        for (name, keys) in registrations(&src) {
            seen += 1;
            for k in &keys {
                assert!(bounded.contains(&k.as_str()), "label {k:?} of {name:?}");
            }
            if let Some(name) = name {
                assert_eq!(catalog.get(name.as_str()), Some(&keys), "labels of {name}");
            } else {
                // `RuleStats`: the name comes from `Event::metric`.
                assert_eq!(keys, BTreeSet::from(["rule".to_owned()]));
            }
        }
    }
    assert!(seen >= 20, "found {seen} registrations: the scan works");
}

#[test]
fn operators_md_names_every_metric() {
    let doc = std::fs::read_to_string(root().join("docs/operators.md")).unwrap();
    for m in METRICS {
        assert!(
            doc.contains(&format!("`{}", m.name)),
            "docs/operators.md lacks {}",
            m.name
        );
    }
}
