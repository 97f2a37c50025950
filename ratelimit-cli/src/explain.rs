//! `ratelimit explain FILE --request 'POST /login' ...`: which rules a
//! request runs and why, from [`Limiter::explain`] (the limiter's own
//! selection and key code), with no backend.

use std::io::Write;

use ratelimit_core::limiter::{Explanation, RuleExplanation, RuleGroup, RuleStatus};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, Limiter, ManualClock};
use serde_json::json;

fn status_text(s: RuleStatus) -> &'static str {
    match s {
        RuleStatus::Runs => "runs",
        RuleStatus::NoMatch => "no match",
        RuleStatus::Expired => "skipped: expires_at has passed",
        RuleStatus::AllowListed => "skipped: on its allow list",
        RuleStatus::KeyMissing => "skipped: a key part is missing (on_missing_key skip)",
        RuleStatus::NoDistinctValue => "skipped: no value for distinct_of",
        RuleStatus::Rejects => "rejects: a key part is missing (on_missing_key reject), 400",
        RuleStatus::WouldReject => "would reject (log rule): a key part is missing",
        RuleStatus::PushedOut => "pushed out: the cap of 5 was full",
        RuleStatus::PenaltyOnly => "pushed out by the cap; its penalty cache is still consulted",
        _ => "other",
    }
}

fn group_text(g: RuleGroup) -> &'static str {
    match g {
        RuleGroup::SiteWide => "site-wide",
        RuleGroup::Count => "count",
        _ => "other",
    }
}

fn rule_json(r: &RuleExplanation) -> serde_json::Value {
    json!({
        "rule": &*r.rule,
        "group": group_text(r.group),
        "status": status_text(r.status),
        "slot": r.slot,
        "blocks": r.blocks,
        "key": r.key.iter().map(|(p, v)| json!({"part": p, "value": v})).collect::<Vec<_>>(),
        "subject": r.subject.map(|s| s.to_hex()),
        "fallback_ip": r.fallback_ip,
        "canary_in": r.canary_in,
    })
}

/// One rule as a line (and its key on the next).
fn write_rule(out: &mut dyn Write, r: &RuleExplanation) -> std::io::Result<()> {
    let slot = r.slot.map_or("-".to_owned(), |s| s.to_string());
    let mode = if r.blocks { "block" } else { "log" };
    let status = match (r.group, r.status) {
        (RuleGroup::Count, RuleStatus::Runs) => "runs: counts the upstream's status",
        (_, s) => status_text(s),
    };
    let group = group_text(r.group);
    writeln!(
        out,
        "  {slot:>2} {:<20} {group:<9} {mode:<5} {status}",
        r.rule
    )?;
    if r.status == RuleStatus::NoMatch {
        return Ok(());
    }
    let key: Vec<String> = (r.key.iter())
        .map(|(p, v)| {
            format!(
                "{p}={}",
                v.as_deref()
                    .map_or("(missing)".to_owned(), |v| format!("{v:?}"))
            )
        })
        .collect();
    write!(out, "        key {}", key.join(" "))?;
    if let Some(s) = r.subject {
        write!(out, " -> subject {}", s.to_hex())?;
    }
    if r.fallback_ip {
        write!(out, " (fallback: the client IP)")?;
    }
    if let Some(c) = r.canary_in {
        write!(
            out,
            " (canary: {})",
            if c { "in, blocks" } else { "out, logs" }
        )?;
    }
    writeln!(out)
}

fn write_text(out: &mut dyn Write, line: &str, x: &Explanation) -> std::io::Result<()> {
    writeln!(out, "{line} at {}", crate::time::format_ms(x.now_ms))?;
    writeln!(out, "slot rule                 group     mode  status")?;
    for r in &x.rules {
        write_rule(out, r)?;
    }
    let verdict = if x.rejected {
        "400: a blocking rule rejects the request for a missing key"
    } else if x.capped {
        "more rules matched than the cap of 5: the rest were pushed out"
    } else {
        "every matching rule runs"
    };
    writeln!(out, "{verdict}")
}

/// Runs `ratelimit explain`: exit 0, or 1 when the file does not load.
pub(crate) fn run(o: &crate::ExplainOptions, out: &mut dyn Write) -> i32 {
    let now_ms = crate::cli::now_or_clock(o.now);
    let file = &o.file.display().to_string();
    let req = crate::request::from_options(o);
    let key = o.hash_key.unwrap_or(HashKey::DEFAULT);
    let loaded = crate::input::read_text(&o.file)
        .ok()
        .and_then(|text| RuleSet::from_json_at(&text, now_ms).ok());
    let Some(set) = loaded else {
        for d in crate::check::check_path(&o.file, file, now_ms) {
            crate::write_ok(writeln!(out, "{d}"));
        }
        return 1;
    };
    let limiter = Limiter::builder(set)
        .clock(ManualClock::new(now_ms))
        .hash_key(key)
        .build();
    let x = limiter.explain(&req);
    let line = format!("{} {} from {}", req.method, req.path, req.client_ip);
    let written = match o.format {
        crate::OutputFormat::Json => {
            let doc = json!({
                "request": line,
                "now": crate::time::format_ms(x.now_ms),
                "capped": x.capped,
                "rejected": x.rejected,
                "rules": x.rules.iter().map(rule_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{doc:#}")
        }
        _ => write_text(out, &line, &x),
    };
    crate::write_ok(written);
    0
}
