//! The replay's report as one self-contained HTML page (`--report
//! FILE.html`): per rule, requests, would-limit and limited per minute
//! over the log's span as an inline SVG chart, and its top clients. No
//! script, no external asset: the page opens from a file, offline.

use std::fmt::Write as _;

use super::{RuleTally, Tally};
use crate::time::format_ms;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 150.0;

/// The three series: requests, would-limit, limited.
const SERIES: [(&str, &str); 3] = [
    ("requests", "#4c78a8"),
    ("would-limit", "#f2a900"),
    ("limited", "#d62728"),
];

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:820px}\
h1{font-size:20px}h2{font-size:16px;margin:28px 0 4px}table{border-collapse:collapse;margin:6px 0}\
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}td:first-child,th:first-child{text-align:left}\
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:3px;\
vertical-align:middle;margin-right:4px}svg{background:#fafafa;border:1px solid #ddd}.muted{color:#666}";

/// Text with `&`, `<`, `>` and `"` escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// One rule's chart: a polyline per series over the minutes from `first`
/// to `last` (minutes without a request are zero).
fn chart(r: &RuleTally, first: u64, last: u64) -> String {
    let minutes = ((last - first) / 60_000).max(1) as f64;
    let max = r
        .per_minute
        .iter()
        .map(|(_, c)| c[0])
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let x = |m: u64| (m - first) as f64 / 60_000.0 / minutes * (WIDTH - 50.0) + 40.0;
    let y = |v: u64| HEIGHT - 20.0 - v as f64 / max * (HEIGHT - 30.0);
    let mut svg = format!(
        "<svg width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">\
         <text x=\"4\" y=\"14\" font-size=\"11\">{max}</text><text x=\"4\" y=\"{}\" font-size=\"11\">0</text>",
        HEIGHT - 20.0
    );
    for (k, (name, colour)) in SERIES.iter().enumerate() {
        let mut points = String::new();
        let mut prev: Option<u64> = None;
        for &(m, counts) in &r.per_minute {
            // Back to zero over a gap of more than a minute.
            if let Some(p) = prev.filter(|p| m > p + 60_000) {
                let _ = write!(points, "{:.1},{:.1} ", x(p + 60_000), y(0));
                let _ = write!(points, "{:.1},{:.1} ", x(m - 60_000), y(0));
            }
            let _ = write!(points, "{:.1},{:.1} ", x(m), y(counts[k]));
            prev = Some(m);
        }
        let _ = write!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"><title>{name}</title></polyline>",
            points.trim_end()
        );
    }
    let _ = write!(
        svg,
        "<text x=\"40\" y=\"{h}\" font-size=\"11\">{}</text><text x=\"{w}\" y=\"{h}\" font-size=\"11\" text-anchor=\"end\">{}</text></svg>",
        escape(&format_ms(first)[11..16]),
        escape(&format_ms(last)[11..16]),
        h = HEIGHT - 4.0,
        w = WIDTH - 10.0
    );
    svg
}

/// One rule's section: counts, chart, top clients.
fn rule_section(out: &mut String, r: &RuleTally, span: (u64, u64), top: usize) {
    let _ = write!(
        out,
        "<h2>{}</h2><p class=\"muted\">{} requests, {} would-limit, {} limited</p>{}",
        escape(&r.rule),
        r.requests,
        r.would_limit,
        r.limited,
        chart(r, span.0 - span.0 % 60_000, span.1 - span.1 % 60_000)
    );
    let clients = r.top(top);
    if clients.is_empty() {
        out.push_str("<p class=\"muted\">No client refused.</p>");
        return;
    }
    out.push_str("<table><tr><th>client</th><th>refused</th><th>first refusal</th></tr>");
    for (ip, c) in clients {
        let _ = write!(
            out,
            "<tr><td>{ip}</td><td>{}</td><td>{}</td></tr>",
            c.refused,
            format_ms(c.first_ms)
        );
    }
    out.push_str("</table>");
}

/// The page for log `log`'s tally `t`, with the `top` clients per rule.
pub(super) fn html(log: &str, t: &Tally, top: usize) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>ratelimit replay: {log}</title><style>{STYLE}</style></head><body>\
         <h1>ratelimit replay: {log}</h1>",
        log = escape(log)
    );
    let [fwd, limited, bad_req, unavailable] = t.outcomes;
    let _ = write!(
        out,
        "<p>{} lines, {} bad (skipped). Requests: {fwd} forwarded, {limited} limited (429), \
         {bad_req} rejected (400), {unavailable} unavailable (503).</p>",
        t.lines, t.bad
    );
    let Some(span) = t.span_ms else {
        out.push_str("<p>No line replayed.</p></body></html>\n");
        return out;
    };
    let _ = write!(
        out,
        "<p class=\"muted\">From {} to {}, per minute.</p><p class=\"legend\">",
        format_ms(span.0),
        format_ms(span.1)
    );
    for (name, colour) in SERIES {
        let _ = write!(
            out,
            "<span><i style=\"background:{colour}\"></i>{name}</span>"
        );
    }
    out.push_str("</p>");
    for r in &t.rules {
        rule_section(&mut out, r, span, top);
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_and_escaped() {
        let mut t = Tally {
            lines: 1,
            span_ms: Some((60_000, 180_000)),
            ..Tally::default()
        };
        t.rules.push(RuleTally {
            rule: "<login>".into(),
            requests: 3,
            would_limit: 0,
            limited: 1,
            clients: Default::default(),
            per_minute: vec![(60_000, [2, 0, 0]), (180_000, [1, 0, 1])],
        });
        let page = html("a&b.log", &t, 5);
        assert!(page.contains("<h2>&lt;login&gt;</h2>"), "{page}");
        assert!(page.contains("a&amp;b.log"));
        assert_eq!(page.matches("<polyline").count(), 3);
        // Two requests in the first minute, the top of the scale; the gap
        // minute (120000, half way) drawn at zero.
        assert!(
            page.contains("points=\"40.0,10.0 395.0,130.0 395.0,130.0 750.0,70.0\""),
            "{page}"
        );
        for external in ["<script", "src=", "href=", "url(", "@import"] {
            assert!(!page.contains(external), "{external}");
        }
    }
}
