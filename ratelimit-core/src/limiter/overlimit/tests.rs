use super::*;
use crate::algorithm::CheckQuota;
use crate::rules::RuleSet;

fn rule(json: &str) -> Arc<Rule> {
    RuleSet::from_json(json).unwrap().rules()[0].clone()
}

const FW: &str = r#"[{"id": "a", "expression": "true", "algorithm": "fixed_window",
    "limit": 3, "period": "1m", "key": ["ip"]}]"#;

fn check(rule: &Arc<Rule>, n: u8, cost: u64) -> Check {
    Check::new(
        rule.clone(),
        "ns".into(),
        KeyDigest([n; 16]),
        CheckQuota::per_minute(3).with_cost(cost),
        None,
        None,
    )
}

#[test]
fn a_refusal_holds_until_its_earliest_admission_for_costs_at_least_its_own() {
    let r = rule(FW);
    let c = OverLimitCache::new(10);
    let k = check(&r, 1, 2);
    c.remember(&k, &Decision::deny(500, 1, 800), 1000);
    let d = c.refused(&k.state_key, &r, 2, 1200).unwrap();
    assert_eq!((d.allowed, d.retry_after_ms, d.remaining), (false, 300, 1));
    assert_eq!(d.reset_ms, 600);
    assert!(c.refused(&k.state_key, &r, 3, 1499).is_some());
    assert!(
        c.refused(&k.state_key, &r, 1, 1200).is_none(),
        "smaller cost asks"
    );
    assert!(
        c.refused(&k.state_key, &r, 2, 1500).is_none(),
        "ends on time"
    );
}

#[test]
fn only_plain_backend_refusals_are_kept() {
    let r = rule(FW);
    let c = OverLimitCache::new(10);
    let k = check(&r, 1, 1);
    c.remember(&k, &Decision::allow(1, 10), 0);
    let mut penalty = Decision::deny(500, 0, 500);
    penalty.blocked_until_ms = Some(500);
    c.remember(&k, &penalty, 0);
    assert!(c.refused(&k.state_key, &r, 1, 1).is_none());
    let d = rule(
        r#"[{"id": "d", "expression": "true", "algorithm": "distinct", "limit": 3,
        "period": "1m", "key": ["ip"], "distinct_of": "path"}]"#,
    );
    c.remember(&check(&d, 2, 1), &Decision::deny(5, 0, 5), 0);
    assert!(c.refused(&check(&d, 2, 1).state_key, &d, 1, 1).is_none());
}

#[test]
fn a_probe_refused_under_a_penalty_rule_is_kept_a_count_is_not() {
    let r = rule(FW);
    let c = OverLimitCache::new(10);
    let with_penalty = |n, mode| {
        let mut k = check(&r, n, 1).with_mode(mode);
        k.penalty_ms = Some(60_000);
        k
    };
    let deny = Decision::deny(500, 0, 500);
    // A probe starts no penalty: nothing else would answer its flood.
    let probe = with_penalty(1, CheckMode::Probe);
    c.remember(&probe, &deny, 0);
    assert!(c.refused(&probe.state_key, &r, 1, 1).is_some());
    // A count or a charge refused here started the penalty: the
    // penalty cache holds it.
    for (n, mode) in [(2, CheckMode::Count), (3, CheckMode::Charge)] {
        let k = with_penalty(n, mode);
        c.remember(&k, &deny, 0);
        assert!(c.refused(&k.state_key, &r, 1, 1).is_none(), "{mode:?}");
    }
}

#[test]
fn another_published_rule_does_not_match() {
    let r = rule(FW);
    let c = OverLimitCache::new(10);
    let k = check(&r, 1, 1);
    c.remember(&k, &Decision::deny(500, 0, 500), 0);
    let republished = rule(FW);
    assert!(c.refused(&k.state_key, &republished, 1, 1).is_none());
    assert!(c.refused(&k.state_key, &r, 1, 1).is_none(), "dropped");
}

#[test]
fn full_cache_drops_new_refusals_and_counts_them_and_off_is_off() {
    let r = rule(FW);
    let c = OverLimitCache {
        map: Some(Sharded::new(1, 1)),
        ..OverLimitCache::new(1)
    };
    let deny = Decision::deny(500, 0, 500);
    c.remember(&check(&r, 1, 1), &deny, 0);
    c.remember(&check(&r, 2, 1), &deny, 0);
    assert_eq!(c.dropped(), 1);
    assert!(c.refused(&check(&r, 2, 1).state_key, &r, 1, 1).is_none());
    let off = OverLimitCache::new(0);
    off.remember(&check(&r, 1, 1), &deny, 0);
    assert!(off.refused(&check(&r, 1, 1).state_key, &r, 1, 1).is_none());
}
