//! The page: server-rendered HTML with plain forms, no JavaScript.
//!
//! Rendered with [maud](https://maud.lambda.xyz/) templates, checked at
//! compile time: every value spliced into the markup (rule ids,
//! expressions, key parts, subjects, notes, the mount path) is escaped by
//! the engine, so no value can be forgotten. Only [`STYLE`], a constant,
//! goes in unescaped (`PreEscaped`).

mod sections;
mod temporary;
mod workflow;

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::fleet::Fleet;
use crate::snapshot::Snapshot;
use crate::workflow::Checked;

/// A draft on the page: what the operator typed, what checking it found,
/// and the answer of the last action.
#[derive(Debug, Default, Clone)]
pub(crate) struct Draft {
    pub(crate) json: String,
    pub(crate) note: String,
    pub(crate) checked: Option<Checked>,
    pub(crate) message: Option<String>,
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}\
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\
code{font-size:.9em}.on{color:#b00;font-weight:bold}.off{color:#070}\
.warn{background:#fff4e0}textarea{font:12px monospace}pre{background:#f8f8f8;padding:.6em;max-height:24em;overflow:auto}\
form{display:inline}";

/// What every form needs: where the router is mounted and the CSRF token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Forms<'a> {
    /// The mount path (`/admin`; empty at the root).
    pub(crate) base: &'a str,
    /// The token of the request's CSRF nonce.
    pub(crate) token: &'a str,
}

impl Forms<'_> {
    /// The URL of the action `name` (`reset`, `switch`, ...).
    pub(crate) fn action(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    /// The hidden CSRF field.
    pub(crate) fn csrf(&self) -> Markup {
        html! { input type="hidden" name=(crate::csrf::FIELD) value=(self.token); }
    }
}

/// Renders the page. `base` is the path the router is mounted at (forms
/// post to `base/reset`, `base/switch`, ...); `draft` is the draft being
/// worked on (else the running set is offered as one).
pub(crate) fn page(
    s: &Snapshot,
    fl: &Fleet,
    draft: Option<&Draft>,
    base: &str,
    token: &str,
) -> String {
    let f = Forms { base, token };
    let home = crate::routes::home(base);
    let running = Draft {
        json: s.rules_json.clone(),
        ..Draft::default()
    };
    let set = ratelimit_core::rules::RuleSet::from_json(&s.rules_json).unwrap_or_default();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "Rate limits" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "Rate limits" }
                p {
                    a href=(home) { "Reload" } " · "
                    a href={ (base) "/state.json" } { "state.json" } " · "
                    a href={ (base) "/rules.json" } { "rules.json" }
                    " · limiter clock " (s.now_ms) " (Unix ms)"
                }
                (sections::switches(s, f))
                (workflow::fleet(fl, s.now_ms))
                (sections::attention(&fl.attention(s)))
                (workflow::guard_attention(fl))
                (temporary::rules(fl, s.now_ms, f))
                (sections::penalties(s, f))
                (workflow::rollout(&set, fl, f))
                (workflow::draft(draft.unwrap_or(&running), fl, f))
                (workflow::history(fl, s.now_ms, f))
                (sections::rules(s))
                (sections::limiter(s))
                h2 { "Running rule set" }
                details {
                    summary { "JSON (" (s.rules.len()) " rules)" }
                    pre { (s.rules_json) }
                }
            }
        }
    }
    .into_string()
}
