use super::*;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{ManualClock, RequestAttrs};
use std::sync::Arc;

/// The verdict for one request from 192.0.2.1 under `rules`.
async fn verdict(rules: &str) -> Verdict {
    let limiter = Limiter::builder(RuleSet::from_json(rules).expect("rules"))
        .clock(ManualClock::new(1_767_225_600_000))
        .build();
    let attrs = RequestAttrs::new("192.0.2.1".parse().expect("ip"));
    limiter.check(&attrs).await
}

#[tokio::test]
async fn an_after_that_holds_nothing_drops_nothing() {
    // No rule matches: the parts are empty, and an `After` of them asks
    // nothing of the response.
    let after = After::new(verdict(r#"[]"#).await, None);
    assert!(after.is_nothing());
    assert!(after.holds_nothing());
}

#[tokio::test]
async fn a_dropped_after_frees_what_it_holds() {
    // A blocking rule with headers fills the header items: the `After`
    // holds them, and its charge, and frees both when dropped.
    let rules = r#"[{"id": "api", "expression": "true",
        "algorithm": "fixed_window", "limit": 10, "period": "1m",
        "key": ["ip"], "ratelimit_headers": true}]"#;
    let v = verdict(rules).await;
    assert!(!v.headers.is_empty(), "the rule gives a header item");
    let charge = Charge::default();
    let after = After::new(v, Some(charge.clone()));
    assert_eq!(charge.holders(), 2);
    assert!(!after.is_nothing());
    assert!(!after.holds_nothing());
    drop(after);
    assert_eq!(charge.holders(), 1, "the dropped `After` let its charge go");
}

#[tokio::test]
async fn a_dropped_after_frees_its_ticket_when_it_holds_nothing_else() {
    // A count rule without headers: the ticket's items are all the
    // `After` holds (its lists never had room). Dropping it frees them,
    // which the rule's reference count shows: the item holds the rule.
    let rules = RuleSet::from_json(
        r#"[{"id": "logins", "expression": "true", "algorithm": "fixed_window",
            "limit": 5, "period": "1m", "key": ["ip"], "count_statuses": ["401"]}]"#,
    )
    .expect("rules");
    let rule = rules.rules()[0].clone();
    let limiter = Limiter::builder(rules)
        .clock(ManualClock::new(1_767_225_600_000))
        .build();
    let v = limiter
        .check(&RequestAttrs::new("192.0.2.1".parse().expect("ip")))
        .await;
    assert!(!v.ticket.is_empty(), "the count rule is on the ticket");
    let held = Arc::strong_count(&rule);
    let after = After::new(v, None);
    assert!(after.holds_nothing(), "no list with room, no charge");
    drop(after);
    assert_eq!(
        Arc::strong_count(&rule),
        held - 1,
        "the ticket's item is freed"
    );
}
