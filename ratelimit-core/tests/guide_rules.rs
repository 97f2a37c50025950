//! Every JSON rule the guide (`docs/*.md`) and the README show loads as
//! shown (issue 27, item 13).
//!
//! The convention, for whoever writes a chapter:
//!
//! - a ```` ```json ```` block is a rule (an object) or a rule set (a list,
//!   or `{"rules": [...]}`), and must load with [`RuleSet::from_json`] on
//!   its own: a single rule is loaded as a set of one, so it needs its
//!   partners (an `ip` key part for a client-chosen key) in the block;
//! - a ```` ```json,invalid ```` block is a rule or set shown being
//!   refused, and must be refused;
//! - a ```` ```json,not-rules ```` block is other JSON (a reply, a
//!   dashboard), and must parse as JSON.
//!
//! Rust blocks marked `no_run` or `ignore` are compiled but never run, so a
//! rule set in one of their raw strings (`r#"[{"id": ...}]"#`) would load
//! only in the reader's program: those are loaded here too. Rust blocks
//! that run are doctests and load their rules themselves.

use std::path::{Path, PathBuf};

use ratelimit_core::rules::RuleSet;

/// One fenced block: where it starts, its info string, its text.
struct Block {
    at: String,
    info: String,
    text: String,
}

/// The fenced blocks of a Markdown file (fences may be indented, as in
/// lists).
fn blocks(path: &Path) -> Vec<Block> {
    let md = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in md.lines().enumerate() {
        let t = line.trim_start();
        match (&mut open, t.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    at: format!("{name}:{}", i + 1),
                    info: info.trim().to_owned(),
                    text: String::new(),
                })
            }
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(b), _) => {
                b.text.push_str(t);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{name}: a fence is never closed");
    out
}

/// The guide's chapters and the README.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.push(root.join("README.md"));
    docs
}

/// `text` as a rule set: a lone rule becomes a set of one.
fn load(text: &str) -> Result<RuleSet, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let set = if value.get("id").is_some() {
        serde_json::Value::Array(vec![value])
    } else {
        value
    };
    RuleSet::from_json(&set.to_string()).map_err(|e| e.to_string())
}

/// The raw strings (`r#"..."#`) of a Rust block that parse as JSON holding
/// rules, with the `# ` of hidden lines taken off.
fn raw_rule_strings(code: &str) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| {
            l.strip_prefix("# ")
                .or(l.strip_prefix('#').filter(|r| r.is_empty()))
                .unwrap_or(l)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(start) = rest.find("r#\"") {
        let after = &rest[start + 3..];
        let Some(end) = after.find("\"#") else { break };
        let s = &after[..end];
        if serde_json::from_str::<serde_json::Value>(s).is_ok() && s.contains("\"id\"") {
            out.push(s.to_owned());
        }
        rest = &after[end + 2..];
    }
    out
}

/// What is wrong with block `b`, if anything; `None` for blocks that hold
/// no rules to check. Counts the rule sets it loaded in `loaded`.
fn check(b: &Block, loaded: &mut usize) -> Option<Option<String>> {
    let mut words = b.info.split(',').map(str::trim);
    let lang = words.next().unwrap_or("");
    let marks: Vec<&str> = words.collect();
    let sets = match lang {
        "json" => vec![b.text.clone()],
        "rust" if marks.iter().any(|m| *m == "no_run" || *m == "ignore") => {
            raw_rule_strings(&b.text)
        }
        _ => return None,
    };
    *loaded += sets.len();
    let errors: Vec<String> = match (lang, marks.as_slice()) {
        ("json", []) | ("rust", _) => sets.iter().filter_map(|s| load(s).err()).collect(),
        ("json", ["invalid"]) => sets
            .iter()
            .filter(|s| load(s).is_ok())
            .map(|_| "marked invalid, but it loads".to_owned())
            .collect(),
        ("json", ["not-rules"]) => sets
            .iter()
            .filter_map(|s| serde_json::from_str::<serde_json::Value>(s).err())
            .map(|e| e.to_string())
            .collect(),
        _ => vec![format!(
            "unknown marks {marks:?}: use json, json,invalid or json,not-rules"
        )],
    };
    Some((!errors.is_empty()).then(|| errors.join("; ")))
}

#[test]
fn every_json_rule_of_the_guide_loads_as_shown() {
    let mut problems = Vec::new();
    let mut loaded = 0;
    for doc in documents() {
        for b in blocks(&doc) {
            if let Some(Some(why)) = check(&b, &mut loaded) {
                problems.push(format!("{} ({}): {why}", b.at, b.info));
            }
        }
    }
    // 4 json blocks and the README's no_run rule set, when this was written.
    assert!(loaded >= 5, "the guide's JSON rules were found ({loaded})");
    assert!(
        problems.is_empty(),
        "JSON rules of the guide that do not load as shown:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_refuses_what_it_should() {
    // A lone rule with a client-chosen key and no partner: what
    // docs/charges.md showed before issue 27.
    let alone = r#"{"id": "t", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["header:x-api-key"]}"#;
    assert!(load(alone).is_err());
    assert!(load(&format!("[{alone}]")).is_err());
    assert!(load(r#"{"id": "t", "period": "1 minute"}"#).is_err());
    assert!(load("not json").is_err());
    let code = "let r = f(r#\"[{\"id\": \"a\"}]\"#)?;\n# let s = r#\"{\"id\": \"b\"}\"#;\nlet t = r#\"plain\"#;";
    assert_eq!(
        raw_rule_strings(code),
        [r#"[{"id": "a"}]"#, r#"{"id": "b"}"#]
    );
    let ok = r#"{"id": "t", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"]}"#;
    assert!(load(ok).is_ok());
    assert!(load(&format!(r#"{{"rules": [{ok}]}}"#)).is_ok());
}

#[test]
fn marks_are_checked_as_they_say() {
    let block = |info: &str, text: &str| Block {
        at: "test.md:1".into(),
        info: info.into(),
        text: text.into(),
    };
    let ok = r#"{"id": "t", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"]}"#;
    let bad = r#"{"id": "t", "period": "1 minute"}"#;
    let mut n = 0;
    assert_eq!(check(&block("json", ok), &mut n), Some(None));
    assert!(matches!(check(&block("json", bad), &mut n), Some(Some(_))));
    assert_eq!(check(&block("json,invalid", bad), &mut n), Some(None));
    assert_eq!(
        check(&block("json,invalid", ok), &mut n),
        Some(Some("marked invalid, but it loads".into()))
    );
    assert_eq!(
        check(&block("json,not-rules", r#"{"a": 1}"#), &mut n),
        Some(None)
    );
    assert!(matches!(
        check(&block("json,not-rules", "{"), &mut n),
        Some(Some(_))
    ));
    assert!(
        matches!(check(&block("json,ignore", ok), &mut n), Some(Some(_))),
        "unknown mark"
    );
    assert_eq!(
        check(&block("rust", "r#\"[1\"#"), &mut n),
        None,
        "run by rustdoc"
    );
    assert_eq!(check(&block("text", bad), &mut n), None);
    assert_eq!(n, 7);
}
