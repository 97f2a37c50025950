//! The replay's report as text.

use std::io::{Result, Write};

use super::Tally;
use crate::time::format_ms;

/// Writes `t`'s report for log `log`, with the `top` clients of each rule.
pub(super) fn text(out: &mut dyn Write, log: &str, t: &Tally, top: usize) -> Result<()> {
    let parsed = t.lines - t.bad;
    writeln!(
        out,
        "{log}: {} line(s), {parsed} replayed, {} bad (skipped)",
        t.lines, t.bad
    )?;
    if let Some((first, last)) = t.span_ms {
        writeln!(out, "from {} to {}", format_ms(first), format_ms(last))?;
    }
    if t.out_of_order > 0 {
        writeln!(
            out,
            "{} line(s) out of time order (up to {} ms back), replayed at the latest time seen",
            t.out_of_order, t.max_back_ms
        )?;
    }
    for (number, why, line) in &t.first_bad {
        writeln!(out, "  bad line {number}: {why}: {line:?}")?;
    }
    if t.bad > t.first_bad.len() as u64 {
        writeln!(
            out,
            "  ... and {} more bad line(s)",
            t.bad - t.first_bad.len() as u64
        )?;
    }
    let [fwd, limited, bad_req, unavailable] = t.outcomes;
    writeln!(
        out,
        "requests: {fwd} forwarded, {limited} limited (429), {bad_req} rejected (400), {unavailable} unavailable (503)"
    )?;
    writeln!(
        out,
        "\n{:<24} {:>10} {:>12} {:>10}",
        "rule", "requests", "would-limit", "limited"
    )?;
    for r in &t.rules {
        writeln!(
            out,
            "{:<24} {:>10} {:>12} {:>10}",
            r.rule, r.requests, r.would_limit, r.limited
        )?;
        for (ip, c) in r.top(top) {
            writeln!(
                out,
                "    {ip:<39} refused {:>8}, first at {}",
                c.refused,
                format_ms(c.first_ms)
            )?;
        }
    }
    Ok(())
}
