//! `ratelimit check`: load rule files exactly as `RuleSet` does and report
//! every error and warning with file, line, column, rule and field.
//!
//! The loader reports every field at fault in every rule
//! ([`RuleError::others`]), and checks across rules (repeated ids, the
//! site-wide cap, partners) once each rule loads. To report those too, the
//! rules blamed are set aside and the rest loaded again, until the rest
//! loads or an error names no rule: each error is the loader's own.
//! (Setting aside a broken site-wide `ip` rule can make a rule it partnered
//! fail too: that error is real once the broken rule is gone.)

use std::path::Path;

use ratelimit_core::rules::{RuleError, RuleSet};
use serde_json::Value;

use crate::diag::{Diagnostic, Severity};
use crate::locate::{position, rule_spans, RuleSpan};

/// Most errors reported per file.
const MAX_ERRORS: usize = 50;

/// The diagnostics of the rule file at `path`, with expiry judged at
/// `now_ms`; `name` is how to call the file.
pub(crate) fn check_path(path: &Path, name: &str, now_ms: u64) -> Vec<Diagnostic> {
    match crate::input::read_text(path) {
        Ok(text) => check_text(name, &text, now_ms),
        Err(e) => vec![Diagnostic {
            file: name.to_owned(),
            position: None,
            severity: Severity::Error,
            rule: None,
            field: None,
            message: e.to_string(),
        }],
    }
}

/// The diagnostics of rule file `text`.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::check_text;
/// let text = "[\n{\"id\": \"a\", \"expression\": \"true\", \"algorithm\": \"fixed_window\",\n \"limit\": 0, \"period\": \"1m\", \"key\": [\"ip\"]}\n]";
/// let d = check_text("rules.json", text, 0);
/// assert_eq!(d[0].to_string(),
///     "rules.json:3:2: error: rule \"a\", field \"limit\": must be 1 to 1000000000");
/// ```
pub fn check_text(name: &str, text: &str, now_ms: u64) -> Vec<Diagnostic> {
    let diag = |severity, at: Option<usize>, rule: Option<&str>, field: Option<&str>, m: &str| {
        Diagnostic {
            file: name.to_owned(),
            position: at.map(|o| position(text, o)),
            severity,
            rule: rule.map(str::to_owned),
            field: field.map(str::to_owned),
            message: m.to_owned(),
        }
    };
    let err = match RuleSet::from_json_at(text, now_ms) {
        Ok(set) => {
            let spans = rule_spans(text).unwrap_or_default();
            let ids = ids(text);
            let mut out = Vec::new();
            for w in set.warnings() {
                let at = find(&spans, &ids, &w.rule).map(|i| spans[i].offset_of(Some(&w.field)));
                out.push(diag(
                    Severity::Warning,
                    at,
                    Some(&w.rule),
                    Some(&w.field),
                    &w.message,
                ));
            }
            return out;
        }
        Err(e) => e,
    };
    if let Err(json) = serde_json::from_str::<Value>(text) {
        // The loader's message, at serde_json's line and column.
        let mut d = diag(
            Severity::Error,
            None,
            err.rule(),
            err.field(),
            err.message(),
        );
        d.position = Some(crate::locate::Position {
            line: json.line(),
            column: json.column(),
        });
        return vec![d];
    }
    let (Some(spans), Some(values)) = (rule_spans(text), elements(text)) else {
        return vec![diag(
            Severity::Error,
            Some(0),
            err.rule(),
            err.field(),
            err.message(),
        )];
    };
    every_error(&spans, values, err, now_ms)
        .into_iter()
        .map(|(i, e)| {
            let at = i.map_or(Some(0), |i| Some(spans[i].offset_of(e.field())));
            diag(Severity::Error, at, e.rule(), e.field(), e.message())
        })
        .collect()
}

/// The errors of the rule list, each with the index of the rule it blames:
/// those of the first load, then those of the rest with each blamed rule
/// set aside.
fn every_error(
    spans: &[RuleSpan],
    values: Vec<Value>,
    first: RuleError,
    now_ms: u64,
) -> Vec<(Option<usize>, RuleError)> {
    let ids: Vec<Option<String>> = values.iter().map(id_of).collect();
    let mut left: Vec<usize> = (0..values.len()).collect();
    let mut out = Vec::new();
    let mut err = first;
    loop {
        let found: Vec<RuleError> = std::iter::once(err.clone())
            .chain(err.others().iter().cloned())
            .collect();
        let blamed: Vec<Option<usize>> = found.iter().map(|e| blame(e, &left, &ids)).collect();
        out.extend(blamed.iter().copied().zip(found));
        if blamed.contains(&None) {
            break;
        }
        left.retain(|j| !blamed.contains(&Some(*j)));
        if out.len() >= MAX_ERRORS || spans.len() != values.len() {
            out.truncate(MAX_ERRORS);
            break;
        }
        let rest = Value::Array(left.iter().map(|&j| values[j].clone()).collect());
        match RuleSet::from_json_at(&rest.to_string(), now_ms) {
            Ok(_) => break,
            Err(e) => err = e,
        }
    }
    out
}

/// The index (in the file) of the rule `err` names, among `left` (indexes
/// of the rules loaded): `#n` is the n-th of those; an id shared by several
/// is the last (the loader blames the repeat).
fn blame(err: &RuleError, left: &[usize], ids: &[Option<String>]) -> Option<usize> {
    let rule = err.rule()?;
    if let Some(n) = rule.strip_prefix('#').and_then(|n| n.parse::<usize>().ok()) {
        if ids
            .get(*left.get(n)?)
            .is_some_and(|id| id.as_deref() != Some(rule))
        {
            return left.get(n).copied();
        }
    }
    left.iter()
        .rev()
        .copied()
        .find(|&i| ids[i].as_deref() == Some(rule))
}

fn id_of(v: &Value) -> Option<String> {
    v.get("id").and_then(Value::as_str).map(str::to_owned)
}

/// The rule values of `text`, a list or `{"rules": [...]}`.
fn elements(text: &str) -> Option<Vec<Value>> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(a) => Some(a),
        Value::Object(mut o) => match o.remove("rules")? {
            Value::Array(a) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

fn ids(text: &str) -> Vec<Option<String>> {
    elements(text)
        .unwrap_or_default()
        .iter()
        .map(id_of)
        .collect()
}

/// The first rule with id `id`.
fn find(spans: &[RuleSpan], ids: &[Option<String>], id: &str) -> Option<usize> {
    let i = ids.iter().position(|x| x.as_deref() == Some(id))?;
    (i < spans.len()).then_some(i)
}

/// Runs `ratelimit check`: exit 0 when every file loads with no error, 1
/// on errors, 2 on warnings with `--deny-warnings`.
pub(crate) fn run(o: &crate::CheckOptions, out: &mut dyn std::io::Write) -> i32 {
    let now_ms = crate::cli::now_or_clock(o.now);
    let names: Vec<String> = o.files.iter().map(|f| f.display().to_string()).collect();
    let mut all = Vec::new();
    for (file, name) in o.files.iter().zip(&names) {
        all.extend(check_path(file, name, now_ms));
    }
    let errors = all.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = all.len() - errors;
    let written = match o.format {
        crate::OutputFormat::Json => {
            let doc = serde_json::json!({
                "files": names,
                "errors": errors,
                "warnings": warnings,
                "diagnostics": all.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{doc:#}")
        }
        _ => {
            let mut w = Ok(());
            for d in &all {
                w = w.and_then(|()| writeln!(out, "{d}"));
            }
            let files = names.len();
            w.and_then(|()| {
                writeln!(
                    out,
                    "{files} file(s): {errors} error(s), {warnings} warning(s)"
                )
            })
        }
    };
    crate::write_ok(written);
    if errors > 0 {
        1
    } else if warnings > 0 && o.deny_warnings {
        2
    } else {
        0
    }
}
