//! The guard fires when the traffic changed between the phases, and only
//! then.

use super::*;

const MIN: u64 = 60_000;

/// Log phase: 10 minutes, 60 requests a minute over the limit from 20
/// subjects (2 a minute).
fn log_phase() -> Phase {
    Phase::new(10_000, 600, 20, 10 * MIN)
}

#[test]
fn the_same_traffic_under_a_canary_keeps_it() {
    // 10% canary, 5 minutes: 10% of 60/min is 6/min, 30 blocked; 1 subject a
    // minute scaled is 10 over 5 minutes: 1 in the canary.
    let canary = Phase::new(5_000, 30, 1, 5 * MIN);
    assert_eq!(
        decide(&log_phase(), &canary, 1_000, GuardConfig::DEFAULT),
        GuardVerdict::Keep
    );
}

#[test]
fn traffic_that_grew_past_the_margin_rolls_back() {
    // The same 10% canary, but a new client floods: 40 blocked a minute in
    // the canary, 400/min scaled against 60/min in the log phase.
    let canary = Phase::new(5_000, 200, 1, 5 * MIN);
    let v = decide(&log_phase(), &canary, 1_000, GuardConfig::DEFAULT);
    let GuardVerdict::RollBack(why) = v else {
        panic!("{v:?}")
    };
    assert!(why.starts_with("requests blocked per minute"), "{why}");
    assert!(why.contains("(400)") && why.contains("(60)"), "{why}");
}

#[test]
fn more_subjects_than_the_log_phase_saw_rolls_back() {
    // Requests as before, but spread over 10 subjects in the canary in 5
    // minutes: 20 a minute scaled against 2 a minute.
    let canary = Phase::new(5_000, 30, 10, 5 * MIN);
    let v = decide(&log_phase(), &canary, 1_000, GuardConfig::DEFAULT);
    assert!(
        matches!(&v, GuardVerdict::RollBack(why) if why.starts_with("subjects")),
        "{v:?}"
    );
}

#[test]
fn the_margin_is_where_it_fires() {
    // 10% canary for 10 minutes: the shadow rate 60/min is 60 blocked in
    // the canary; 50% more is 90. At 90 it keeps, at 91 it rolls back.
    let at = |over| Phase::new(5_000, over, 0, 10 * MIN);
    let cfg = GuardConfig::DEFAULT;
    assert_eq!(
        decide(&log_phase(), &at(90), 1_000, cfg),
        GuardVerdict::Keep
    );
    assert!(matches!(
        decide(&log_phase(), &at(91), 1_000, cfg),
        GuardVerdict::RollBack(_)
    ));
    // A wider margin keeps 91; a zero margin rolls back 61.
    assert_eq!(
        decide(&log_phase(), &at(91), 1_000, cfg.margin_percent(100)),
        GuardVerdict::Keep
    );
    assert!(matches!(
        decide(&log_phase(), &at(61), 1_000, cfg.margin_percent(0)),
        GuardVerdict::RollBack(_)
    ));
}

#[test]
fn a_log_phase_without_traffic_is_never_acted_on() {
    let canary = Phase::new(100_000, 100_000, 1_000, 5 * MIN);
    let quiet = Phase::new(0, 0, 0, 10 * MIN);
    assert_eq!(
        decide(&quiet, &canary, 1_000, GuardConfig::DEFAULT),
        GuardVerdict::NoBaseline
    );
    let instant = Phase::new(10, 0, 0, 0);
    assert_eq!(
        decide(&instant, &canary, 1_000, GuardConfig::DEFAULT),
        GuardVerdict::NoBaseline
    );
}

#[test]
fn a_log_phase_with_traffic_but_nothing_over_rolls_back_any_blocking() {
    // The rule saw traffic and would have limited nothing; now it blocks.
    let calm = Phase::new(10_000, 0, 0, 10 * MIN);
    let canary = Phase::new(500, 5, 1, 5 * MIN);
    assert!(matches!(
        decide(&calm, &canary, 1_000, GuardConfig::DEFAULT),
        GuardVerdict::RollBack(_)
    ));
}

#[test]
fn it_waits_for_the_minimum_of_requests() {
    let canary = Phase::new(99, 99, 50, 5 * MIN);
    assert_eq!(
        decide(&log_phase(), &canary, 1_000, GuardConfig::DEFAULT),
        GuardVerdict::TooFewRequests {
            seen: 99,
            need: 100
        }
    );
    let cfg = GuardConfig::DEFAULT.min_requests(50);
    assert!(matches!(
        decide(&log_phase(), &canary, 1_000, cfg),
        GuardVerdict::RollBack(_)
    ));
}

#[test]
fn huge_counts_do_not_overflow_and_odd_shares_are_clamped() {
    let big = Phase::new(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
    assert_eq!(
        decide(&big, &big, 10_000, GuardConfig::DEFAULT),
        GuardVerdict::Keep
    );
    // A share of 0 is read as 1 basis point, more than 10,000 as all.
    let canary = Phase::new(5_000, 60, 0, 10 * MIN);
    assert_eq!(
        decide(&log_phase(), &canary, 50_000, GuardConfig::DEFAULT),
        GuardVerdict::Keep
    );
    assert!(matches!(
        decide(&log_phase(), &canary, 0, GuardConfig::DEFAULT),
        GuardVerdict::RollBack(_)
    ));
}
