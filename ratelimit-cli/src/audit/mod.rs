//! `ratelimit audit FILE`: the production checklist's gates as findings
//! over a rule set.
//!
//! Deterministic: the gates run in their order ([`gates::GATES`]), each
//! over the rules in file order, and decide with the rules' own
//! expressions against fixed probe requests ([`probes`]): the same file
//! gives the same findings in the same order.

pub(crate) mod finding;
pub(crate) mod gates;
pub(crate) mod probes;

use std::io::Write;

use ratelimit_core::rules::RuleSet;

pub use finding::{Finding, Gate, Level};

/// The findings over `set`, with expiry judged at `now_ms`.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::{audit, Level};
/// use ratelimit_core::rules::RuleSet;
///
/// let set = RuleSet::from_json(r#"[{"id": "login",
///     "expression": "http.request.uri.path eq \"/login\"",
///     "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]}]"#)?;
/// let codes: Vec<&str> = audit(&set, 0).iter()
///     .filter(|f| f.level == Level::Warning).map(|f| f.gate.code).collect();
/// assert_eq!(codes, ["RL001", "RL002", "RL004"]);
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
pub fn audit(set: &RuleSet, now_ms: u64) -> Vec<Finding> {
    let rules = set.rules();
    let mut out = gates::fixed_window(rules);
    out.extend(gates::login_tuples(rules));
    out.extend(gates::ip_only(rules));
    out.extend(gates::fail_open_auth(rules));
    out.extend(gates::shared_auth_read(rules));
    out.extend(gates::expired(rules, now_ms));
    out.extend(gates::cap(rules));
    out.extend(gates::multi_region());
    out
}

/// Runs `ratelimit audit FILE`: exit 1 when the file does not load, 2 on
/// warnings with `--deny-warnings`, else 0 (info never fails).
pub(crate) fn run(o: &crate::AuditOptions, out: &mut dyn Write) -> i32 {
    let now_ms = crate::cli::now_or_clock(o.now);
    let file = &o.file.display().to_string();
    let loaded = crate::input::read_text(&o.file)
        .ok()
        .and_then(|text| RuleSet::from_json_at(&text, now_ms).ok());
    let Some(set) = loaded else {
        // Not loadable: say why exactly as check does.
        for d in crate::check::check_path(&o.file, file, now_ms) {
            crate::write_ok(writeln!(out, "{d}"));
        }
        return 1;
    };
    let findings = audit(&set, now_ms);
    let count = |l: Level| findings.iter().filter(|f| f.level == l).count();
    let (warnings, infos) = (count(Level::Warning), count(Level::Info));
    let written = match o.format {
        crate::OutputFormat::Json => {
            let doc = serde_json::json!({
                "file": file,
                "rules": set.rules().len(),
                "warnings": warnings,
                "infos": infos,
                "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{doc:#}")
        }
        _ => findings
            .iter()
            .try_for_each(|f| writeln!(out, "{f}\n"))
            .and_then(|()| {
                writeln!(
                    out,
                    "{file}: {} rule(s), {warnings} warning(s), {infos} info",
                    set.rules().len()
                )
            }),
    };
    crate::write_ok(written);
    if warnings > 0 && o.deny_warnings {
        2
    } else {
        0
    }
}
