//! `Limiter::explain` against what `Limiter::check` does.

use crate::limiter::{Limiter, RuleGroup, RuleStatus};
use crate::rules::RuleSet;
use crate::stats::Event;
use crate::test_runtime::block_on;
use crate::{ManualClock, RequestAttrs};

const NOW: u64 = 1_767_225_600_000;

fn rule(id: &str, extra: &str) -> String {
    format!(
        r#"{{"id": "{id}", "expression": "http.request.uri.path eq \"/x\"",
            "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]{extra}}}"#
    )
}

fn limiter(rules: &[String]) -> Limiter {
    let set = RuleSet::from_json_at(&format!("[{}]", rules.join(",")), NOW).unwrap();
    Limiter::builder(set).clock(ManualClock::new(NOW)).build()
}

fn req() -> RequestAttrs {
    RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/x")
}

#[test]
fn the_cap_blocking_rules_first_and_penalty_only() {
    let mut rules = vec![rule("log-first", r#", "action": "log""#)];
    for i in 0..5 {
        rules.push(rule(&format!("b{i}"), ""));
    }
    rules.push(rule("b5-penalty", r#", "penalty": "1m""#));
    rules.push(rule("b6", ""));
    let l = limiter(&rules);
    let why = l.explain(&req());
    let got: Vec<(&str, RuleStatus, Option<usize>)> = why
        .rules
        .iter()
        .map(|r| (&*r.rule, r.status, r.slot))
        .collect();
    assert_eq!(
        got,
        [
            ("b0", RuleStatus::Runs, Some(1)),
            ("b1", RuleStatus::Runs, Some(2)),
            ("b2", RuleStatus::Runs, Some(3)),
            ("b3", RuleStatus::Runs, Some(4)),
            ("b4", RuleStatus::Runs, Some(5)),
            ("b5-penalty", RuleStatus::PenaltyOnly, None),
            ("b6", RuleStatus::PushedOut, None),
            ("log-first", RuleStatus::PushedOut, None),
        ]
    );
    assert!(why.capped);
    assert!(why.rules.iter().all(|r| r.group == RuleGroup::Other));
    // Nothing was counted: no stats, and the one request of each limit is
    // still there.
    assert_eq!(l.rule_stats("b5-penalty").unwrap().get(Event::Capped), 0);
    assert!(block_on(l.check(&req())).is_forward());
}

#[test]
fn keys_subjects_and_reasons() {
    let l = limiter(&[
        r#"{"id": "site", "expression": "true", "algorithm": "sliding_window",
            "limit": 9, "period": "1m", "key": ["ip"]}"#
            .to_owned(),
        rule("fallback", r#", "key": ["ip", "header:x-user"]"#),
        rule(
            "skip",
            r#", "key": ["jwt_claim:sub"], "on_missing_key": "skip""#,
        ),
        rule(
            "reject",
            r#", "key": ["jwt_claim:sub"], "on_missing_key": "reject", "action": "log""#,
        ),
        rule("expired", r#", "expires_at": "2020-01-01T00:00:00Z""#),
        rule("allowed", r#", "allow": {"ips": ["203.0.113.0/24"]}"#),
        rule(
            "distinct",
            r#", "algorithm": "distinct", "distinct_of": "query:q""#,
        ),
        r#"{"id": "other-path", "expression": "http.request.uri.path eq \"/y\"",
            "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]}"#
            .to_owned(),
    ]);
    let r = req().with_header("x-user", "ann");
    let why = l.explain(&r);
    let by = |id: &str| why.rules.iter().find(|x| &*x.rule == id).unwrap();
    assert_eq!(
        (by("site").group, by("site").status, by("site").slot),
        (RuleGroup::SiteWide, RuleStatus::Runs, None)
    );
    assert_eq!(by("site").subject, Some(l.subject_of("site", &r).unwrap()));
    let f = by("fallback");
    assert_eq!(
        f.key,
        [
            ("ip".to_owned(), Some("203.0.113.7".to_owned())),
            ("header:x-user".to_owned(), Some("ann".to_owned()))
        ]
    );
    assert_eq!((f.status, f.fallback_ip), (RuleStatus::Runs, false));
    assert_eq!(f.subject, Some(l.subject_of("fallback", &r).unwrap()));
    let f = l.explain(&req());
    let f = f.rules.iter().find(|x| &*x.rule == "fallback").unwrap();
    assert!(f.fallback_ip);
    assert_eq!(by("skip").status, RuleStatus::KeyMissing);
    assert_eq!(by("reject").status, RuleStatus::WouldReject);
    assert_eq!(by("expired").status, RuleStatus::Expired);
    assert_eq!(by("allowed").status, RuleStatus::AllowListed);
    assert_eq!(by("distinct").status, RuleStatus::NoDistinctValue);
    assert_eq!(by("other-path").status, RuleStatus::NoMatch);
    assert!(!why.capped && !why.rejected);
    // Log rules come after blocking ones.
    assert_eq!(&*why.rules.last().unwrap().rule, "reject");
}
