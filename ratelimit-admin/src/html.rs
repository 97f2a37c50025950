//! The page: server-rendered HTML with plain forms, no JavaScript.
//!
//! Every value is escaped with [`escape`]: rule ids, expressions, key
//! parts, subjects (digests) and the mount path alike.

use std::fmt::Write;

use ratelimit_core::stats::Event;

use crate::snapshot::{RuleRow, Snapshot, EVENTS, SWITCHES};

/// Escapes `s` for HTML text and double- or single-quoted attributes.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}\
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\
code{font-size:.9em}.on{color:#b00;font-weight:bold}.off{color:#070}\
.warn{background:#fff4e0}pre{background:#f8f8f8;padding:.6em;max-height:24em;overflow:auto}\
form{display:inline}";

/// The hidden CSRF field.
fn csrf_field(token: &str) -> String {
    format!(
        r#"<input type="hidden" name="{}" value="{}">"#,
        crate::csrf::FIELD,
        escape(token)
    )
}

/// Renders the page. `base` is the path the router is mounted at (forms
/// post to `base/reset` and `base/switch`).
pub(crate) fn page(s: &Snapshot, base: &str, token: &str) -> String {
    let home = escape(crate::routes::home(base));
    let base = escape(base);
    let mut h = String::with_capacity(16 * 1024);
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Rate limits</title><style>{STYLE}</style></head><body>\
         <h1>Rate limits</h1><p><a href=\"{home}\">Reload</a> · \
         <a href=\"{base}/state.json\">state.json</a> · \
         <a href=\"{base}/rules.json\">rules.json</a> · limiter clock {} (Unix ms)</p>",
        s.now_ms
    );
    switches(&mut h, s, &base, token);
    attention(&mut h, s);
    penalties(&mut h, s, &base, token);
    rules(&mut h, s);
    let _ = write!(
        h,
        "<h2>Limiter</h2><table><tr><th>requests over the rule cap</th><td class=n>{}</td></tr>\
         <tr><th>refused by the backstop</th><td class=n>{}</td></tr>\
         <tr><th>penalty cache: blocks held</th><td class=n>{}</td></tr>\
         <tr><th>penalty cache: blocks dropped (full)</th><td class=n>{}</td></tr>\
         <tr><th>local stores: subjects not tracked (full)</th><td class=n>{}</td></tr></table>",
        s.capped,
        s.backstop_limited,
        s.penalty_cache_len,
        s.penalty_cache_dropped,
        s.local_untracked
    );
    let _ = write!(
        h,
        "<h2>Running rule set</h2><details><summary>JSON ({} rules)</summary><pre>{}</pre></details>\
         </body></html>",
        s.rules.len(),
        escape(&s.rules_json)
    );
    h
}

fn switches(h: &mut String, s: &Snapshot, base: &str, token: &str) {
    h.push_str("<h2>Emergency switches</h2><table><tr><th>switch</th><th>state</th><th>what it does</th><th></th></tr>");
    for ((name, what), on) in SWITCHES.iter().zip(s.switches) {
        let (state, class, label) = if on {
            ("ON", "on", "Turn off")
        } else {
            ("off", "off", "Turn on")
        };
        let _ = write!(
            h,
            "<tr><td><code>{name}</code></td><td class={class}>{state}</td><td>{}</td><td>\
             <form method=post action=\"{base}/switch\">{}\
             <input type=hidden name=switch value=\"{name}\">\
             <input type=hidden name=on value=\"{}\">\
             <button type=submit>{label}</button></form></td></tr>",
            escape(what),
            csrf_field(token),
            !on
        );
    }
    h.push_str("</table>");
}

fn subjects(top: &[(ratelimit_core::KeyDigest, u64)]) -> String {
    top.iter()
        .take(5)
        .map(|(d, n)| format!("<code>{}</code> ({n})", escape(&d.to_hex())))
        .collect::<Vec<_>>()
        .join("<br>")
}

fn attention(h: &mut String, s: &Snapshot) {
    h.push_str("<h2>Needs attention</h2>");
    let rows: Vec<&RuleRow> = s.needs_attention().collect();
    if rows.is_empty() {
        h.push_str("<p>No rule would have limited a request.</p>");
        return;
    }
    h.push_str(
        "<p>Rules that would have limited requests (log rules over their limit, \
         or blocking rules while a switch makes them log), with the subjects they would hit.</p>\
         <table><tr><th>rule</th><th>would limit</th><th>subjects (digest, count)</th></tr>",
    );
    for r in rows {
        let _ = write!(
            h,
            "<tr class=warn><td><code>{}</code></td><td class=n>{}</td><td>{}</td></tr>",
            escape(&r.id),
            r.count(Event::WouldLimit),
            subjects(&r.top)
        );
    }
    h.push_str("</table>");
}

fn penalties(h: &mut String, s: &Snapshot, base: &str, token: &str) {
    h.push_str("<h2>Penalties in force</h2>");
    if s.penalties.is_empty() {
        h.push_str("<p>None among the subjects the rules limited most.</p>");
        return;
    }
    h.push_str("<table><tr><th>rule</th><th>subject</th><th>ends in</th><th></th></tr>");
    for p in &s.penalties {
        let (rule, subject) = (escape(&p.rule), escape(&p.subject.to_hex()));
        let _ = write!(
            h,
            "<tr><td><code>{rule}</code></td><td><code>{subject}</code></td><td class=n>{} s</td>\
             <td><form method=post action=\"{base}/reset\">{}\
             <input type=hidden name=rule value=\"{rule}\">\
             <input type=hidden name=subject value=\"{subject}\">\
             <button type=submit>Lift</button></form></td></tr>",
            p.remaining_s,
            csrf_field(token)
        );
    }
    h.push_str("</table>");
}

fn rules(h: &mut String, s: &Snapshot) {
    h.push_str("<h2>Rules</h2><table><tr><th>rule</th><th>action</th><th>limit</th><th>key</th><th>expression</th>");
    for (_, name) in EVENTS {
        let _ = write!(h, "<th>{}</th>", name.replace('_', " "));
    }
    h.push_str("<th>top limited</th></tr>");
    for r in &s.rules {
        let penalty = r
            .penalty_s
            .map(|p| format!(", penalty {p} s"))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{} / {} s ({}{penalty})</td>\
             <td><code>{}</code></td><td><code>{}</code></td>",
            escape(&r.id),
            match (r.blocking, r.temporary) {
                (true, false) => "block",
                (false, false) => "log",
                (true, true) => "block (temporary)",
                (false, true) => "log (temporary)",
            },
            r.limit,
            r.period_s,
            escape(r.algorithm),
            escape(&r.key),
            escape(&r.expression)
        );
        for n in r.counts {
            let _ = write!(h, "<td class=n>{n}</td>");
        }
        let _ = write!(h, "<td>{}</td></tr>", subjects(&r.top));
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_covers_text_and_both_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
