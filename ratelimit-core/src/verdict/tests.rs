//! Unit tests of `verdict.rs`.

use super::*;
use crate::rules::RuleBuilder;
use std::time::Duration;

#[test]
fn headers_follow_the_ietf_draft_syntax() {
    let mut v = Verdict::forward();
    v.headers.push(HeaderItem {
        id: "login".into(),
        quota: 5,
        window_s: 60,
        remaining: 2,
        reset_s: 41,
    });
    v.headers.push(HeaderItem {
        id: "per-ip".into(),
        quota: 300,
        window_s: 60,
        remaining: 299,
        reset_s: 60,
    });
    assert_eq!(
        v.ratelimit_policy().unwrap(),
        r#""login";q=5;w=60, "per-ip";q=300;w=60"#
    );
    assert_eq!(
        v.ratelimit().unwrap(),
        r#""login";r=2;t=41, "per-ip";r=299;t=60"#
    );
}

#[test]
fn retry_after_rounds_up_to_whole_seconds() {
    let mut v = Verdict::forward();
    assert_eq!(v.retry_after_secs(), None);
    v.outcome = Outcome::Limited;
    v.retry_after_ms = 59_500;
    assert_eq!(v.retry_after_secs(), Some(60));
    v.retry_after_ms = 1;
    assert_eq!(v.retry_after_secs(), Some(1));
    v.outcome = Outcome::Unavailable;
    assert_eq!(v.retry_after_secs(), Some(1));
}

/// A ticket is empty until a rule needs it; count and charge items are
/// told apart.
#[test]
fn a_ticket_holds_count_and_charge_items_apart() {
    let rule = Arc::new(
        RuleBuilder::new("r")
            .fixed_window(10, Duration::from_secs(60))
            .key(["ip"])
            .build()
            .expect("rule"),
    );
    let d = KeyDigest([7; 16]);
    let mut t = ResponseTicket::default();
    assert!(t.is_empty() && !t.charges());
    assert_eq!(t.count_items().len(), 0);
    t.push_charge(ChargeItem {
        rule: rule.clone(),
        namespace: "ns".into(),
        namespace_digest: d,
        subject: d,
        state_key: d,
        blocks: true,
        penalty_ms: None,
    });
    assert!(t.is_empty() && t.charges(), "a charge is not a count");
    for n in 1..=2 {
        t.push_count(CountItem {
            rule: rule.clone(),
            namespace: "ns".into(),
            subject: d,
            state_key: d,
            blocks: false,
        });
        assert_eq!((t.is_empty(), t.len()), (false, n));
    }
    assert_eq!((t.count_items().len(), t.charge_items().len()), (2, 1));
    let copy = t.clone();
    assert_eq!((copy.len(), copy.charge_items().len()), (2, 1));
}
