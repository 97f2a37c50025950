//! Valkey unreachable (a proxy that cuts every connection): the breaker
//! opens after five failures and probes once a second, alone and under
//! load.
//!
//! In every case: each request is answered within the deadline (50 ms) plus
//! a margin (150 ms, for this small shared machine); `fail_mode: open`
//! passes, `closed` answers 503 with `Retry-After: 1`, `local` admits
//! `limit / fleet size` per instance; the breaker opens and then lets one
//! probe through per second (calls stop reaching Valkey); after recovery
//! the count is shared across instances again; no call is sent twice (the
//! server's `INFO commandstats` against the checks the instances sent);
//! nothing panics. The fleet and these checks are
//! `ratelimit_tests::support::{faults, fault_answers, fault_calls}`.
//!
//! The fault tests take turns (a lock): their latency bounds must not
//! depend on another test's load.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::backend::BackendErrorKind;
use ratelimit_core::Outcome;
use ratelimit_testkit::valkey::{evalsha_stats, spawned, IsolatedProxy, ProxyMode};
use ratelimit_tests::support::fault_answers::*;
use ratelimit_tests::support::fault_calls::*;
use ratelimit_tests::support::faults::*;
use ratelimit_tests::support::load::{ask, Load};
use ratelimit_tests::support::record::Sample;
use ratelimit_tests::support::wall_ms;

/// Valkey unreachable (the proxy cuts every connection): the breaker of a
/// lone sequential client opens after exactly 5 failures and lets one probe
/// through 1 s later; under load, calls stop reaching the proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_opens_the_breaker_after_five_failures_and_probes_each_second() {
    let _turn = SERIAL.lock().await;
    let what = "down";
    let server = spawned();
    let port = server.port().expect("spawned");
    let proxy = Arc::new(IsolatedProxy::start(format!("127.0.0.1:{port}")));
    let fleet = fleet(&proxy.url(), INSTANCES, 0).await;
    let lone = fleet_of_one(&proxy.url(), 9).await;
    let probe_ip = ip(2, 9);
    assert_eq!(
        ask(&lone.limiters[0], 9, "/closed", probe_ip).await.outcome,
        Outcome::Forward
    );
    let load = Load::start(&fleet.limiters, CLIENTS, PATHS, 5, 2);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (c0, b0) = (proxy.connections(), proxy.bytes_up());
    let healthy_bytes_per_s = b0 * 1000 / 400;

    let t_down = wall_ms();
    proxy.set_mode(ProxyMode::Down);
    // The proxy's counters 0.3 s and 2.3 s into the outage.
    let sampler = {
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for at in [300, 2_300] {
                tokio::time::sleep(until(t_down + at)).await;
                out.push((at, proxy.connections(), proxy.bytes_up()));
            }
            out
        })
    };
    // The lone client: one check every 20 ms, for 2.5 s.
    let mut lone_answers = Vec::new();
    while wall_ms() < t_down + 2_500 {
        lone_answers.push(ask(&lone.limiters[0], 9, "/closed", probe_ip).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let counters = sampler.await.expect("sampler");
    let local = assert_local_share(what, &fleet, ip(2, 1)).await;
    let t_pass = wall_ms();
    proxy.set_mode(ProxyMode::Pass);
    let (recovered_after, t_healthy, answers) = recover(what, &fleet, load, t_pass, ip(2, 2)).await;

    // The lone client: 5 failures that reach the wire, then the breaker.
    let lone_samples = lone.log.samples();
    let seq: Vec<&Sample> = lone_samples
        .iter()
        .filter(|s| s.sent_ms >= t_down)
        .collect();
    for (k, s) in seq.iter().take(5).enumerate() {
        assert_eq!(
            s.result,
            Err(BackendErrorKind::Connection),
            "{what}: lone call {k} must fail on the wire"
        );
    }
    assert_eq!(
        seq[5].result,
        Err(BackendErrorKind::BreakerOpen),
        "{what}: the 6th call must find the breaker open"
    );
    // The breaker opened between the 5th call's start and end; the probe is
    // let through 1 s after that: it ends at least 1 s after the 5th call
    // started, and (one call every 20 ms) starts at most 1 s + 20 ms + the
    // margin after the 5th call ended. Likewise for the next probe.
    let probes: Vec<&&Sample> = seq[5..]
        .iter()
        .filter(|s| s.result != Err(BackendErrorKind::BreakerOpen))
        .collect();
    assert!(probes.len() >= 2, "{what}: lone probes {probes:?}");
    let mut gaps = Vec::new();
    for (before, probe) in [(seq[4], probes[0]), (*probes[0], probes[1])] {
        let (least, most) = (
            probe.done_ms - before.sent_ms,
            probe.sent_ms - before.done_ms,
        );
        assert!(
            least >= 999 && most <= 1_000 + 20 + MARGIN_MS,
            "{what}: a probe {most}..{least} ms after the breaker opened (want 1 s)"
        );
        gaps.push(most);
    }
    let (first, second) = (gaps[0], gaps[1]);
    // Under load: the proxy sees (almost) nothing once the breakers opened.
    assert_eq!(counters.len(), 2, "{what}: counter samples {counters:?}");
    let (_, c1, b1) = counters[0];
    let (_, c2, b2) = counters[1];
    let sent_meanwhile = within(&answers, t_down + 300, t_down + 2_300).len();
    assert!(
        c2 - c1 <= 2 * 3,
        "{what}: {} connections reached the proxy in 2 s with every breaker open",
        c2 - c1
    );
    assert_eq!(b2, b1, "{what}: bytes reached Valkey while it was down");
    assert!(
        sent_meanwhile >= 200,
        "{what}: only {sent_meanwhile} requests"
    );

    let samples = fleet.log.samples();
    let lat = assert_latency(what, &[&answers[..], &local, &lone_answers].concat());
    for a in &lone_answers {
        assert_eq!(
            (a.outcome, a.retry_after),
            (Outcome::Unavailable, Some(1)),
            "{what}: lone client"
        );
    }
    assert_healthy(what, &answers, &samples, 0, t_down);
    let modes = assert_fail_modes(what, &answers, t_down + SETTLE_MS, t_pass);
    assert_healthy(what, &answers, &samples, t_healthy, u64::MAX);
    for i in 0..INSTANCES {
        breaker(what, &samples, i, t_down, t_pass);
    }
    let mut all = samples.clone();
    all.extend(lone_samples);
    let (calls, failed, _) = evalsha_stats(server.url()).await;
    let no_retry = assert_not_retried(what, calls - failed, &all, true);
    eprintln!(
        "fault {what}: {} answers, max {} ms (p99 {} ms); open {} x 200, closed {} x 503; lone client: \
         5 failures then open, probes {first} and {second} ms apart; proxy during 2 s of outage: +{} \
         connections, +{} bytes (healthy: {c0} connections, {healthy_bytes_per_s} B/s) while \
         {sent_meanwhile} requests were answered; recovered {recovered_after} ms after Pass; {}; {no_retry}",
        answers.len(),
        lat.max(),
        lat.quantile(0.99),
        modes.0,
        modes.1,
        c2 - c1,
        b2 - b1,
        kinds(&samples)
    );
}
