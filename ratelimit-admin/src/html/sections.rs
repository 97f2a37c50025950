//! The page's sections about the running limiter: switches, needs
//! attention, penalties in force, rules with their counts, the limiter's
//! own counters.

use maud::{html, Markup};

use super::Forms;
use crate::fleet::Attention;
use crate::snapshot::{Snapshot, TopRow, EVENTS, SWITCHES};

/// The emergency switches, each with its button.
pub(super) fn switches(s: &Snapshot, f: Forms<'_>) -> Markup {
    html! {
        h2 { "Emergency switches" }
        table {
            tr { th { "switch" } th { "state" } th { "what it does" } th {} }
            @for ((name, what), on) in SWITCHES.iter().zip(s.switches) {
                tr {
                    td { code { (name) } }
                    @if on { td.on { "ON" } } @else { td.off { "off" } }
                    td { (what) }
                    td {
                        form method="post" action=(f.action("switch")) {
                            (f.csrf())
                            input type="hidden" name="switch" value=(name);
                            input type="hidden" name="on" value=(!on);
                            button type="submit" { @if on { "Turn off" } @else { "Turn on" } }
                        }
                    }
                }
            }
        }
    }
}

/// Up to five subjects: the readable label when there is one, with the
/// digest (the identity) beside it.
pub(super) fn subjects(top: &[TopRow]) -> Markup {
    html! {
        @for (i, t) in top.iter().take(5).enumerate() {
            @if i > 0 { br; }
            @if let Some(label) = &t.label {
                span.client { (label) } " "
            }
            code { (t.subject.to_hex()) } " (" (t.count) ")"
        }
    }
}

/// The rules that would have limited requests (over the fleet when the
/// control reports it), with the clients they would hit.
pub(super) fn attention(rows: &[Attention]) -> Markup {
    html! {
        h2 { "Needs attention" }
        @if rows.is_empty() {
            p { "No rule would have limited a request." }
        } @else {
            p {
                "Rules that would have limited requests (log rules over their limit, \
                 or blocking rules while a switch makes them log), with the clients they would hit, \
                 over the instances that reported in the last minute."
            }
            table {
                tr { th { "rule" } th { "would limit" } th { "clients (count)" } }
                @for r in rows {
                    tr.warn {
                        td { code { (r.id) } }
                        td.n { (r.would_limit) }
                        td { (subjects(&r.top)) }
                    }
                }
            }
        }
    }
}

/// The penalties in force, each with a Lift button.
pub(super) fn penalties(s: &Snapshot, f: Forms<'_>) -> Markup {
    html! {
        h2 { "Penalties in force" }
        @if s.penalties.is_empty() {
            p { "None among the subjects the rules limited most." }
        } @else {
            table {
                tr { th { "rule" } th { "client" } th { "subject" } th { "ends in" } th {} }
                @for p in &s.penalties {
                    tr {
                        td { code { (p.rule) } }
                        td { @if let Some(l) = &p.label { span.client { (l) } } }
                        td { code { (p.subject.to_hex()) } }
                        td.n { (p.remaining_s) " s" }
                        td {
                            form method="post" action=(f.action("reset")) {
                                (f.csrf())
                                input type="hidden" name="rule" value=(p.rule);
                                input type="hidden" name="subject" value=(p.subject.to_hex());
                                button type="submit" { "Lift" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Every rule with its counts.
pub(super) fn rules(s: &Snapshot) -> Markup {
    html! {
        h2 { "Rules" }
        table {
            tr {
                th { "rule" } th { "action" } th { "limit" } th { "key" } th { "expression" }
                @for (_, name) in EVENTS { th { (name.replace('_', " ")) } }
                th { "top limited" }
            }
            @for r in &s.rules {
                tr {
                    td { code { (r.id) } }
                    td { (r.action_label()) }
                    td {
                        (r.limit) " / " (r.period_s) " s (" (r.algorithm)
                        @if let Some(p) = r.penalty_s { ", penalty " (p) " s" }
                        ")"
                    }
                    td { code { (r.key) } }
                    td { code { (r.expression) } }
                    @for n in r.counts { td.n { (n) } }
                    td { (subjects(&r.top)) }
                }
            }
        }
    }
}

/// The limiter's own counters.
pub(super) fn limiter(s: &Snapshot) -> Markup {
    let rows: [(&str, u64); 5] = [
        ("requests over the rule cap", s.capped),
        ("refused by the backstop", s.backstop_limited),
        ("penalty cache: blocks held", s.penalty_cache_len as u64),
        (
            "penalty cache: blocks dropped (full)",
            s.penalty_cache_dropped,
        ),
        (
            "local stores: subjects not tracked (full)",
            s.local_untracked,
        ),
    ];
    html! {
        h2 { "Limiter" }
        table {
            @for (what, n) in rows { tr { th { (what) } td.n { (n) } } }
        }
    }
}
