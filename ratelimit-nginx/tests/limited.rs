//! "What happens to a limited request".

mod support;

use ratelimit_nginx::{LimitConnStatus, LimitKind};
use ratelimit_testkit::log_capture::LogCapture;
use support::*;
use LimitReqStatus::{Delayed, DelayedDryRun, Passed, Rejected, RejectedDryRun};

const ZONES: &str = "limit_req_zone $client_ip zone=one:1m rate=1r/s;\n\
                     limit_req_zone $http_x_tenant zone=tenant:1m rate=1r/s;\n\
                     limit_conn_zone $client_ip zone=addr:1m;";

#[test]
fn a_refused_request_gets_the_status_of_its_directive() {
    let ip = from("192.0.2.1");
    let default = req_policy(ZONES, "limit_req zone=one;");
    let _ = default.check(&ip, T0);
    assert_eq!(
        default.check(&ip, T0).rejected().map(|r| r.status()),
        Some(503)
    );

    let custom = req_policy(ZONES, "limit_req zone=one; limit_req_status 429;");
    let _ = custom.check(&ip, T0);
    let refused = custom.check(&ip, T0);
    let refused = refused.rejected().expect("refused");
    assert_eq!(
        (refused.status(), refused.kind(), refused.zone()),
        (429, LimitKind::Req, "one")
    );

    let conn = conn_policy(ZONES, "limit_conn addr 1; limit_conn_status 444;");
    let _held = conn.acquire(&ip).into_permit();
    let refused = conn.acquire(&ip);
    let refused = refused.rejected().expect("refused");
    assert_eq!(
        (refused.status(), refused.kind().as_str()),
        (444, "limit_conn")
    );
}

#[test]
fn limit_req_status_takes_every_nginx_value() {
    let ip = from("192.0.2.1");
    let wait = req_policy(ZONES, "limit_req zone=one burst=1;");
    let statuses: Vec<_> = burst_of(&wait, &ip, &clock(), 3)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(statuses, [Some(Passed), Some(Delayed), Some(Rejected)]);
    let dry = req_policy(ZONES, "limit_req zone=one burst=1; limit_req_dry_run on;");
    let statuses: Vec<_> = burst_of(&dry, &ip, &clock(), 3).into_iter().collect();
    // The dry run waits for nothing and refuses nothing.
    assert_eq!(
        statuses,
        [
            (Some(Passed), 0),
            (Some(DelayedDryRun), 0),
            (Some(RejectedDryRun), 0)
        ]
    );
    let names: Vec<_> = [Passed, Delayed, Rejected, DelayedDryRun, RejectedDryRun]
        .map(|s| s.as_str())
        .to_vec();
    assert_eq!(
        names,
        [
            "PASSED",
            "DELAYED",
            "REJECTED",
            "DELAYED_DRY_RUN",
            "REJECTED_DRY_RUN"
        ]
    );
}

#[test]
fn limit_conn_status_takes_every_nginx_value() {
    let ip = from("192.0.2.1");
    let conn = conn_policy(ZONES, "limit_conn addr 1;");
    let held = conn.acquire(&ip);
    assert_eq!(held.status(), Some(LimitConnStatus::Passed));
    assert_eq!(conn.acquire(&ip).status(), Some(LimitConnStatus::Rejected));
    let dry = conn.clone().with_dry_run(true);
    let would = dry.acquire(&ip);
    assert_eq!(
        (would.status(), would.rejected()),
        (Some(LimitConnStatus::RejectedDryRun), None)
    );
}

#[test]
fn when_several_zones_apply_the_worst_outcome_is_shown() {
    let policy = req_policy(
        ZONES,
        "limit_req zone=one burst=5 nodelay; limit_req zone=tenant burst=5;",
    );
    let ip = from("192.0.2.1").with_header("x-tenant", "acme");
    let _ = policy.check(&ip, T0);
    // zone one passes (nodelay), zone tenant delays: the request is DELAYED.
    let d = policy.check(&ip, T0);
    assert_eq!((d.status(), d.delay()), (Some(Delayed), ms(1000)));
}

#[test]
fn several_limit_req_charge_nothing_when_any_of_them_rejects() {
    let policy = req_policy(ZONES, "limit_req zone=one burst=5; limit_req zone=tenant;");
    let one = policy.zones().next().cloned().expect("one");
    let acme = from("192.0.2.1").with_header("x-tenant", "acme");
    let _ = policy.check(&acme, T0);
    assert_eq!(one.stored_excess(b"192.0.2.1"), Some(0));
    for _ in 0..3 {
        assert_eq!(policy.check(&acme, T0).status(), Some(Rejected));
    }
    assert_eq!(
        one.stored_excess(b"192.0.2.1"),
        Some(0),
        "zone one was charged for refused requests"
    );
    // A first request into zone one that zone tenant refuses leaves zone one empty.
    let newcomer = from("192.0.2.9").with_header("x-tenant", "acme");
    assert_eq!(policy.check(&newcomer, T0).status(), Some(Rejected));
    let other = from("192.0.2.9").with_header("x-tenant", "other");
    let d = policy.check(&other, T0);
    assert_eq!(
        (d.status(), d.delay()),
        (Some(Passed), ms(0)),
        "the newcomer was charged"
    );
}

#[test]
fn a_dry_run_forwards_what_would_have_been_refused_and_charges_nothing_for_it() {
    let policy = req_policy(ZONES, "limit_req zone=one; limit_req_dry_run on;");
    let zone = policy.zones().next().cloned().expect("zone");
    let ip = from("192.0.2.1");
    let _ = policy.check(&ip, T0);
    let would = policy.check(&ip, T0);
    assert_eq!(
        (would.status(), would.rejected(), would.delay()),
        (Some(RejectedDryRun), None, ms(0))
    );
    assert_eq!(zone.stored_excess(b"192.0.2.1"), Some(0));
}

#[test]
fn in_a_shadow_site_every_limit_is_a_dry_run() {
    let shadow = req_policy(ZONES, "limit_req zone=one;").with_dry_run(true);
    let ip = from("192.0.2.1");
    let got: Vec<_> = burst_of(&shadow, &ip, &clock(), 3)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(
        got,
        [Some(Passed), Some(RejectedDryRun), Some(RejectedDryRun)]
    );
    let conn = conn_policy(ZONES, "limit_conn addr 1;").with_dry_run(true);
    let _held = conn.acquire(&ip).into_permit();
    assert!(conn.acquire(&ip).rejected().is_none());
}

#[test]
fn a_delayed_request_is_told_how_long_to_wait_and_is_not_refused() {
    let policy = req_policy(ZONES, "limit_req zone=one burst=2;");
    let ip = from("192.0.2.1");
    let _ = policy.check(&ip, T0);
    let d = policy.check(&ip, T0);
    assert_eq!(
        (d.status(), d.delay(), d.rejected()),
        (Some(Delayed), ms(1000), None)
    );
}

#[test]
fn limit_conn_counts_until_the_permit_is_dropped_and_not_a_refused_request() {
    let conn = conn_policy(ZONES, "limit_conn addr 2;");
    let zone = conn.zones().next().cloned().expect("zone");
    let ip = from("192.0.2.1");
    let a = conn.acquire(&ip).into_permit();
    let b = conn.acquire(&ip).into_permit();
    assert_eq!(zone.in_progress(b"192.0.2.1"), 2);
    assert!(conn.acquire(&ip).rejected().is_some());
    assert_eq!(
        zone.in_progress(b"192.0.2.1"),
        2,
        "the refused request was counted"
    );
    drop(a);
    assert_eq!(zone.in_progress(b"192.0.2.1"), 1);
    b.release();
    assert_eq!(
        (zone.in_progress(b"192.0.2.1"), zone.len()),
        (0, 0),
        "the state is freed at 0"
    );
}

#[test]
fn a_request_refused_by_a_later_zone_gives_back_the_earlier_counts() {
    let config =
        "limit_conn_zone $client_ip zone=addr:1m; limit_conn_zone $http_x_tenant zone=tenant:1m;";
    let conn = conn_policy(config, "limit_conn addr 5; limit_conn tenant 1;");
    let addr = conn.zones().next().cloned().expect("addr");
    let _held = conn
        .acquire(&from("192.0.2.7").with_header("x-tenant", "acme"))
        .into_permit();
    let refused = conn.acquire(&from("192.0.2.1").with_header("x-tenant", "acme"));
    assert!(refused.rejected().is_some());
    assert_eq!(addr.in_progress(b"192.0.2.1"), 0);
}

#[test]
fn the_least_recently_used_idle_state_is_evicted_when_the_zone_is_full() {
    // 256 bytes hold two states.
    let policy = req_policy(
        "limit_req_zone $client_ip zone=tiny:256 rate=1r/s;",
        "limit_req zone=tiny burst=5;",
    );
    let zone = policy.zones().next().cloned().expect("zone");
    let clock = clock();
    let _ = burst_of(&policy, &from("192.0.2.1"), &clock, 1); // idle 1 s later
    let _ = burst_of(&policy, &from("192.0.2.2"), &clock, 3); // busy for 3 s
    clock.advance(ms(1000));
    assert_eq!(
        policy.check(&from("192.0.2.3"), clock.now_ms()).status(),
        Some(Passed)
    );
    assert_eq!(
        zone.stored_excess(b"192.0.2.1"),
        None,
        "the idle state was evicted"
    );
    assert_eq!(
        zone.stored_excess(b"192.0.2.2"),
        Some(2000),
        "the busy state was kept"
    );
}

#[test]
fn a_full_zone_never_evicts_a_state_that_still_limits_its_key() {
    // 256 bytes hold two states; no burst: one request per second per key.
    let policy = req_policy(
        "limit_req_zone $client_ip zone=tiny:256 rate=1r/s;",
        "limit_req zone=tiny;",
    );
    let zone = policy.zones().next().cloned().expect("zone");
    let clock = clock();
    for ip in ["192.0.2.1", "192.0.2.2"] {
        assert_eq!(
            policy.check(&from(ip), clock.now_ms()).status(),
            Some(Passed)
        );
        // Stored excess 0, yet the key's next request within 1 s is refused.
        assert_eq!(zone.stored_excess(ip.as_bytes()), Some(0));
    }
    // The zone is full: a newcomer may not push out either state.
    let newcomer = policy.check(&from("192.0.2.3"), clock.now_ms());
    assert_eq!(newcomer.rejected().map(|r| r.zone_exhausted()), Some(true));
    for ip in ["192.0.2.1", "192.0.2.2"] {
        assert_eq!(
            policy.check(&from(ip), clock.now_ms()).status(),
            Some(Rejected),
            "{ip} sent a request less than 1 s ago: a fresh budget would let it pass"
        );
    }
    clock.advance(ms(999));
    let newcomer = policy.check(&from("192.0.2.3"), clock.now_ms());
    assert_eq!(newcomer.rejected().map(|r| r.zone_exhausted()), Some(true));
    // 1 s after their last request both keys are as good as new: one goes.
    clock.advance(ms(1));
    assert_eq!(
        policy.check(&from("192.0.2.3"), clock.now_ms()).status(),
        Some(Passed)
    );
    assert_eq!(zone.len(), 2);
}

#[test]
fn a_full_zone_with_every_state_in_use_refuses_and_logs_zone_exhausted() {
    let config = "limit_req_zone $client_ip zone=tiny:256 rate=1r/s;";
    let policy = req_policy(
        config,
        "limit_req zone=tiny burst=5; limit_req_status 429; limit_req_log_level warn;",
    );
    let clock = clock();
    for ip in ["192.0.2.1", "192.0.2.2"] {
        let _ = burst_of(&policy, &from(ip), &clock, 2);
    }
    let events = LogCapture::run(|| {
        let full = policy.check(&from("192.0.2.3"), clock.now_ms());
        assert_eq!(full.status(), Some(Rejected));
        let r = full.rejected().expect("refused");
        assert_eq!(
            (r.status(), r.zone_exhausted(), r.kind()),
            (429, true, LimitKind::Req)
        );
        let _ = burst_of(&policy, &from("192.0.2.1"), &clock, 5);
    })
    .events();
    let refusals: Vec<_> = events
        .iter()
        .filter(|e| e.field("limit_error").is_some())
        .collect();
    let errors: Vec<_> = refusals
        .iter()
        .filter_map(|e| e.field("limit_error"))
        .collect();
    assert_eq!(errors, ["zone_exhausted", "excess"]);
    assert!(
        refusals.iter().all(|e| e.level == tracing::Level::WARN),
        "{events:?}"
    );
    // 192.0.2.2 (excess 1 request, plus its last request's own) drains 2 s
    // after its last charge and is then evicted.
    clock.advance(ms(2000));
    assert_eq!(
        policy.check(&from("192.0.2.3"), clock.now_ms()).status(),
        Some(Passed)
    );
}

#[test]
fn a_full_limit_conn_zone_refuses_a_new_key_as_zone_exhausted() {
    let conn = conn_policy(
        "limit_conn_zone $client_ip zone=tiny:128;",
        "limit_conn tiny 9;",
    );
    let _a = conn.acquire(&from("192.0.2.1")).into_permit();
    let _b = conn.acquire(&from("192.0.2.2")).into_permit();
    let events = LogCapture::run(|| {
        let full = conn.acquire(&from("192.0.2.3"));
        assert_eq!(full.status(), Some(LimitConnStatus::Rejected));
        assert_eq!(full.rejected().map(|r| r.zone_exhausted()), Some(true));
    })
    .events();
    assert_eq!(
        events
            .iter()
            .filter_map(|e| e.field("limit_error"))
            .collect::<Vec<_>>(),
        ["zone_exhausted"]
    );
    assert_eq!(events[0].level, tracing::Level::ERROR);
}

#[test]
fn delays_are_logged_one_level_below_refusals() {
    let policy = req_policy(
        ZONES,
        "limit_req zone=one burst=1; limit_req_log_level error;",
    );
    let events = LogCapture::run(|| {
        let _ = burst_of(&policy, &from("192.0.2.1"), &clock(), 3);
    })
    .events();
    let levels: Vec<_> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [tracing::Level::WARN, tracing::Level::ERROR]);
    assert_eq!(events[0].field("excess"), Some("1.000"));
    assert_eq!(
        events[1].field("message"),
        Some("limiting requests, excess: 2.000 by zone \"one\"")
    );
}
