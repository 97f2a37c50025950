//! "Burst, delay and nodelay".

mod support;

use ratelimit_nginx::ConfigErrorKind;
use support::*;
use LimitReqStatus::{Delayed, Passed, Rejected};

const ONE_PER_SECOND: &str = "limit_req_zone $client_ip zone=one:1m rate=1r/s;";

#[test]
fn without_burst_every_request_beyond_the_rate_is_rejected() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    assert_eq!(
        burst_of(&policy, &ip, &clock, 3),
        [(Some(Passed), 0), (Some(Rejected), 0), (Some(Rejected), 0)]
    );
    clock.advance(ms(999));
    assert_eq!(
        policy.check(&ip, clock.now_ms()).status(),
        Some(Rejected),
        "at +999 ms"
    );
    clock.advance(ms(1));
    assert_eq!(
        policy.check(&ip, clock.now_ms()).status(),
        Some(Passed),
        "at +1000 ms"
    );
}

#[test]
fn with_burst_excess_requests_wait_for_their_turn_at_the_rate() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=3;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    assert_eq!(
        burst_of(&policy, &ip, &clock, 5),
        [
            (Some(Passed), 0),
            (Some(Delayed), 1000),
            (Some(Delayed), 2000),
            (Some(Delayed), 3000),
            (Some(Rejected), 0),
        ]
    );
    // 1.5 s later one and a half requests drained: the next waits 2.5 s.
    clock.advance(ms(1500));
    let d = policy.check(&ip, clock.now_ms());
    assert_eq!((d.status(), d.delay()), (Some(Delayed), ms(2500)));
}

#[test]
fn waiting_does_not_block_other_requests() {
    // The decision returns at once with the wait; the caller sleeps. Another
    // client, checked while the first one waits, passes without waiting.
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=3;");
    let clock = clock();
    let _ = burst_of(&policy, &from("192.0.2.1"), &clock, 3);
    let other = policy.check(&from("192.0.2.2"), clock.now_ms());
    assert_eq!((other.status(), other.delay()), (Some(Passed), ms(0)));
}

#[test]
fn nodelay_lets_the_whole_burst_pass_at_once() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=3 nodelay;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let got = burst_of(&policy, &ip, &clock, 5);
    assert_eq!(got[..4], [(Some(Passed), 0); 4]);
    assert_eq!(got[4], (Some(Rejected), 0));
}

#[test]
fn delay_n_lets_the_first_n_excess_requests_pass_and_the_rest_wait() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=4 delay=2;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    assert_eq!(
        burst_of(&policy, &ip, &clock, 6),
        [
            (Some(Passed), 0),
            (Some(Passed), 0),
            (Some(Passed), 0),
            (Some(Delayed), 1000),
            (Some(Delayed), 2000),
            (Some(Rejected), 0),
        ]
    );
}

#[test]
fn delay_needs_a_burst_cannot_exceed_it_and_cannot_be_combined_with_nodelay() {
    for (line, message) in [
        ("limit_req zone=one delay=1;", "\"delay=1\" needs a burst"),
        (
            "limit_req zone=one burst=2 delay=3;",
            "\"delay=3\" cannot exceed \"burst=2\"",
        ),
        (
            "limit_req zone=one burst=2 delay=1 nodelay;",
            "\"nodelay\" and \"delay=\" cannot be combined",
        ),
        (
            "limit_req zone=one nodelay burst=2 delay=1;",
            "\"nodelay\" and \"delay=\" cannot be combined",
        ),
    ] {
        let err = Level::parse(&format!("\n  {line}")).expect_err(line);
        assert_eq!(err.kind(), &ConfigErrorKind::InvalidValue, "{line}");
        assert_eq!(
            (err.line(), err.column(), err.directive()),
            (Some(2), Some(3), Some("limit_req")),
            "{line}"
        );
        assert_eq!(err.message(), message, "{line}");
    }
}

#[test]
fn one_per_second_with_burst_two_nodelay_admits_three_at_once() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=2 nodelay;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let got: Vec<_> = burst_of(&policy, &ip, &clock, 4)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(
        got,
        [Some(Passed), Some(Passed), Some(Passed), Some(Rejected)]
    );
}

#[test]
fn the_request_that_finds_the_bucket_empty_is_free_then_burst_more() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=2 nodelay;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let zone = policy.zones().next().cloned().expect("zone");
    let mut excess = Vec::new();
    for _ in 0..4 {
        let _ = policy.check(&ip, clock.now_ms());
        excess.push(zone.stored_excess(b"192.0.2.1"));
    }
    // The refused fourth request is not charged.
    assert_eq!(excess, [Some(0), Some(1000), Some(2000), Some(2000)]);
}

#[test]
fn a_bucket_that_drained_forgets_credit_beyond_one_request() {
    // nginx subtracts the drain before adding the request and floors at 0:
    // after a long pause the bucket is empty, not in credit.
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=1 nodelay;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let _ = burst_of(&policy, &ip, &clock, 1);
    clock.advance(Duration::from_secs(3600));
    let got: Vec<_> = burst_of(&policy, &ip, &clock, 3)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(got, [Some(Passed), Some(Passed), Some(Rejected)]);
}

#[test]
fn per_minute_rates_drain_in_truncated_milli_requests() {
    // 1r/m is 16 milli-requests per second: one request drains in 62.5 s.
    let policy = req_policy(
        "limit_req_zone $client_ip zone=m:1m rate=1r/m;",
        "limit_req zone=m;",
    );
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let _ = burst_of(&policy, &ip, &clock, 1);
    clock.advance(ms(62_499));
    assert_eq!(
        policy.check(&ip, clock.now_ms()).status(),
        Some(Rejected),
        "+62.499 s"
    );
    clock.advance(ms(1));
    assert_eq!(
        policy.check(&ip, clock.now_ms()).status(),
        Some(Passed),
        "+62.5 s"
    );
}

#[test]
fn a_clock_that_steps_back_does_not_drain_the_bucket() {
    let policy = req_policy(ONE_PER_SECOND, "limit_req zone=one burst=1 nodelay;");
    let (clock, ip) = (clock(), from("192.0.2.1"));
    let _ = burst_of(&policy, &ip, &clock, 2);
    clock.set_ms(T0 - 30_000);
    assert_eq!(policy.check(&ip, clock.now_ms()).status(), Some(Rejected));
}
