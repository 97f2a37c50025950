//! What the fleet's instances have applied besides the published set:
//! the switches, the lifts, the rules added at run time (each listed with
//! its expiry and note), and the parts of the control state that cannot
//! be read.

use maud::{html, Markup};
use ratelimit_core::control::{FleetView, InstanceReport};

use super::Forms;
use crate::fleet::Fleet;

/// The parts of the control state that cannot be read, by the control
/// and by each instance, each naming the key and what it should hold.
pub(super) fn problems(view: &FleetView) -> Markup {
    let by_instance = view
        .instances
        .iter()
        .flat_map(|r| r.problems.iter().map(move |p| (r.id.as_str(), p.as_str())));
    html! {
        @for p in &view.problems { p.warn.problem { "The control state: " (p) } }
        @for (id, p) in by_instance { p.warn.problem { code { (id) } " cannot apply: " (p) } }
    }
}

/// Whether instance `r` runs the stored switches and the last lift.
pub(super) fn applied(view: &FleetView, r: &InstanceReport) -> Markup {
    html! {
        @match r.switches {
            None => td { "not reported" },
            Some(s) if s != view.switches => td.warn { "has not applied the switches" },
            Some(_) => td.off { "applied" },
        }
        @if r.lift_seq < view.lift_seq {
            td.warn { "has not applied lift " (view.lift_seq) " (at " (r.lift_seq) ")" }
        } @else {
            td.off { "applied" }
        }
    }
}

/// The rules added at run time: each with its expiry, note and the
/// instances that do not run it; then those instances run that the
/// control no longer stores (kept after a Valkey restart until they
/// expire).
pub(super) fn rules(fl: &Fleet, now_ms: u64, f: Forms<'_>) -> Markup {
    let Ok(view) = &fl.view else {
        return html! {};
    };
    let stored = |id: &str| view.temporary.iter().any(|t| t.rule.id == id);
    let mut kept: Vec<(&str, u64, Vec<&str>)> = Vec::new();
    for r in &view.instances {
        for (id, until) in r.temporary.iter().filter(|(id, _)| !stored(id)) {
            match kept.iter_mut().find(|k| k.0 == id) {
                Some(k) => k.2.push(&r.id),
                None => kept.push((id, *until, vec![&r.id])),
            }
        }
    }
    let secs = |until: u64| until.saturating_sub(now_ms).div_ceil(1000);
    html! {
        h2 { "Rules added at run time" }
        @if view.temporary.is_empty() && kept.is_empty() {
            p { "None: rules added at run time (an autopilot's, expiring within 24 hours) show here." }
        } @else {
            table #temporary {
                tr { th { "rule" } th { "action" } th { "expires in" } th { "note" } th { "not running on" } th {} }
                @for t in &view.temporary {
                    @let missing: Vec<&str> = view.temporary_not_applied(&t.rule.id).iter().map(|r| r.id.as_str()).collect();
                    tr {
                        td { code { (t.rule.id) } }
                        td { (format!("{:?}", t.rule.action).to_lowercase()) }
                        td.n { (secs(t.expires_at_ms())) " s" }
                        td { (t.note) }
                        @if missing.is_empty() { td.off { "runs everywhere" } }
                        @else { td.warn { (missing.join(", ")) } }
                        td {
                            form method="post" action=(f.action("remove_temporary")) {
                                (f.csrf())
                                input type="hidden" name="rule" value=(t.rule.id);
                                button type="submit" { "Remove" }
                            }
                        }
                    }
                }
                @for (id, until, on) in &kept {
                    tr.warn {
                        td { code { (id) } }
                        td {}
                        td.n { (secs(*until)) " s" }
                        td { "not in the control any more (Valkey restarted?); runs on " (on.join(", ")) " until it expires" }
                        td {}
                        td {}
                    }
                }
            }
        }
    }
}
