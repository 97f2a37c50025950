//! The page's sections for operating the fleet: the instances, rolling a
//! rule out (log, canary, block), the draft with its check, the one-rule
//! form, and the history with its rollbacks.

use maud::{html, Markup};
use ratelimit_core::control::FleetView;
use ratelimit_core::rules::{Action, RuleSet};

use super::{Draft, Forms};
use crate::fleet::Fleet;
use crate::workflow::phases;

/// Each instance with its running version and last report; which have
/// not applied the published version.
pub(super) fn fleet(fl: &Fleet, now_ms: u64) -> Markup {
    let version = fl.version();
    html! {
        h2 { "Fleet" }
        @match &fl.view {
            Err(why) => p.warn { "The control did not answer: " (why) },
            Ok(view) => {
                p {
                    @if let Some(p) = fl.current() {
                        "Published: version " b { (p.version) } " — " (p.note)
                    } @else {
                        "Nothing published yet: every instance runs its start-up rule set."
                    }
                    " · " (view.fleet_size()) " instance(s) reported in the last minute"
                    (lagging(view, version))
                }
                (super::temporary::problems(view))
                table #instances {
                    tr {
                        th { "instance" } th { "running version" } th { "schema" } th { "last report" }
                        th { "state" } th { "switches" } th { "lifts" }
                    }
                    @for r in &view.instances {
                        tr {
                            td { code { (r.id) } }
                            td.n { (r.running_version) }
                            td.n { (r.schema) }
                            td.n { (now_ms.saturating_sub(r.last_report_ms) / 1000) " s ago" }
                            @match &r.refused {
                                Some((v, why)) if *v == version => td.warn { "refused version " (v) ": " (why) },
                                _ if r.running_version != version => td.warn { "has not applied version " (version) },
                                _ => td.off { "up to date" },
                            }
                            (super::temporary::applied(view, r))
                        }
                    }
                }
            }
        }
    }
}

fn lagging(view: &FleetView, version: u64) -> Markup {
    let late: Vec<&str> = view
        .lagging(version)
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    html! {
        @if !late.is_empty() {
            " · " span.on { "not yet on version " (version) ": " (late.join(", ")) }
        }
    }
}

/// Rules the rollback guard returned to their previous version.
pub(super) fn guard_attention(fl: &Fleet) -> Markup {
    let list = fl.current().map(phases::rolled_back).unwrap_or_default();
    html! {
        @if !list.is_empty() {
            table #rolled-back {
                tr { th { "rule" } th { "returned by the rollback guard" } }
                @for (rule, why) in list {
                    tr.warn { td { code { (rule) } } td { (why) } }
                }
            }
        }
    }
}

/// Each published rule's rollout, with the buttons to move it on.
pub(super) fn rollout(set: &RuleSet, fl: &Fleet, f: Forms<'_>) -> Markup {
    let version = fl.version();
    let form = |action: &'static str, rule: &str, label: &'static str, pct: bool| {
        html! {
            form method="post" action=(f.action(action)) {
                (f.csrf())
                input type="hidden" name="version" value=(version);
                input type="hidden" name="rule" value=(rule);
                @if pct {
                    input type="number" name="percent" value="10" min="1" max="99" step="any" size="3"
                        aria-label={ "canary percentage of " (rule) };
                    " % "
                }
                button type="submit" { (label) }
            }
        }
    };
    html! {
        h2 { "Rollout: log, canary, block" }
        p {
            "A new rule is published in log. Start a canary once its numbers look right: it blocks \
             for that share of clients only, and the rollback guard returns it to log if it blocks \
             more than the log phase would have limited. Then block for everyone."
        }
        table #rollout {
            tr { th { "rule" } th { "now" } th { "move it" } }
            @for r in set.rules() {
                tr {
                    td { code { (r.id) } }
                    @match (r.action, r.canary_bp) {
                        (Action::Log, _) => {
                            td { "log" }
                            td { (form("canary", &r.id, "Start canary", true)) }
                        }
                        (_, Some(bp)) => {
                            td.on { "canary " (f64::from(bp) / 100.0) " %" }
                            td {
                                (form("promote", &r.id, "Block for everyone", false)) " "
                                (form("demote", &r.id, "Back to log", false))
                            }
                        }
                        _ => {
                            td { "block" }
                            td { (form("demote", &r.id, "Back to log", false)) }
                        }
                    }
                }
            }
        }
    }
}

/// The draft: its JSON, a note, Check and Publish; what the check found.
pub(super) fn draft(d: &Draft, fl: &Fleet, f: Forms<'_>) -> Markup {
    html! {
        h2 #draft { "Draft a rule set" }
        @if let Some(m) = &d.message { p.warn #message { (m) } }
        @if let Some(c) = &d.checked {
            div #check {
                @if c.errors.is_empty() { p.off { "Check: the set loads." } }
                @for e in &c.errors { p.on { "Error: " (e) } }
                @for w in &c.warnings { p.warn { "Warning: " (w) } }
                @for n in &c.notes { p { "Note: " (n) } }
            }
        }
        form method="post" action=(f.action("check")) {
            (f.csrf())
            input type="hidden" name="version" value=(fl.version());
            textarea name="json" rows="14" cols="100" aria-label="rule set JSON" { (d.json) }
            br;
            label { "Note (who and why) " input type="text" name="note" size="60" value=(d.note); }
            " "
            button type="submit" { "Check" }
            " "
            button type="submit" formaction=(f.action("publish")) { "Publish" }
        }
        h3 { "Add or replace one rule in the draft" }
        form method="post" action=(f.action("rule")) #rule-form {
            (f.csrf())
            input type="hidden" name="json" value=(d.json);
            input type="hidden" name="note" value=(d.note);
            label { "id " input type="text" name="id" size="16" required; } " "
            label { "expression " input type="text" name="expression" size="40" value="true"; } " "
            label { "algorithm "
                select name="algorithm" {
                    @for a in ["fixed_window", "sliding_window", "token_bucket", "leaky_bucket"] {
                        option value=(a) { (a) }
                    }
                }
            } " "
            label { "limit " input type="number" name="limit" min="1" size="6" value="100"; } " "
            label { "period " input type="text" name="period" size="4" value="1m"; } " "
            label { "key " input type="text" name="key" size="24" value="ip"; } " "
            button type="submit" { "Put in draft" }
        }
    }
}

/// The published versions, each with a rollback.
pub(super) fn history(fl: &Fleet, now_ms: u64, f: Forms<'_>) -> Markup {
    let version = fl.version();
    html! {
        h2 { "History" }
        @if fl.history.is_empty() {
            p { "Nothing published yet." }
        } @else {
            table #history {
                tr { th { "version" } th { "published" } th { "note" } th {} }
                @for p in &fl.history {
                    tr {
                        td.n { (p.version) }
                        td.n { (now_ms.saturating_sub(p.at_ms) / 1000) " s ago" }
                        td { (p.note) }
                        td {
                            @if p.version == version {
                                "running"
                            } @else {
                                form method="post" action=(f.action("rollback")) {
                                    (f.csrf())
                                    input type="hidden" name="version" value=(version);
                                    input type="hidden" name="to" value=(p.version);
                                    button type="submit" { "Roll back to " (p.version) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
