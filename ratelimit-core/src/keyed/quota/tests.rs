//! Keyed quotas: period bounds, bursts, and namespaces apart from rules'.

use super::*;

const N5: NonZeroU32 = NonZeroU32::new(5).unwrap();

#[test]
fn periods_outside_one_ms_to_a_day_are_refused() {
    assert!(Quota::with_period(N5, Duration::from_micros(999)).is_none());
    assert!(Quota::with_period(N5, Duration::from_millis(1)).is_some());
    assert!(Quota::with_period(N5, Duration::from_secs(86_400)).is_some());
    assert!(Quota::with_period(N5, Duration::from_secs(86_401)).is_none());
}

#[test]
fn windows_ignore_the_burst() {
    let q = Quota::per_second(N5).allow_burst(NonZeroU32::MIN);
    assert_eq!(q.burst(), NonZeroU32::MIN);
    assert_eq!(q.fixed_window().burst(), N5);
    assert_eq!(q.fixed_window().rule("x").burst, None);
    assert_eq!(q.rule("x").quota(1).burst, 1);
}

#[test]
fn a_quota_namespace_never_equals_a_rule_namespace() {
    let q = Quota::per_second(N5);
    let rule = crate::rules::RuleBuilder::new("api")
        .token_bucket(5, Duration::from_secs(1), 5)
        .key(["ip"])
        .build()
        .expect("rule");
    assert_ne!(q.namespace("api"), crate::backend::namespace(&rule));
    assert!(q.namespace("api").starts_with('~'));
    assert_ne!(q.namespace("a"), q.leaky_bucket().namespace("a"));
}
