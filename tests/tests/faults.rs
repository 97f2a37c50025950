//! Valkey faults while clients send traffic: the server killed and started
//! again on the same port, Valkey unreachable (proxy down), paused with
//! SIGSTOP / SIGCONT, made slow (a proxy delaying past the deadline), one
//! primary of a 3-node cluster killed, and the same through the tower layer
//! over HTTP.
//!
//! In every case: each request is answered within the deadline (50 ms) plus
//! a margin (150 ms, for this small shared machine); `fail_mode: open`
//! passes, `closed` answers 503 with `Retry-After: 1`, `local` admits
//! `limit / fleet size` per instance; the breaker opens and then lets one
//! probe through per second (calls stop reaching Valkey); after recovery
//! the count is shared across instances again; no call is sent twice (the
//! server's `INFO commandstats` against the checks the instances sent);
//! nothing panics.
//!
//! The fault tests take turns (a lock): their latency bounds must not
//! depend on another test's load.
#![allow(clippy::print_stderr)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use ratelimit_core::backend::BackendErrorKind;
use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::control::StaticFleet;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, Limiter, Outcome, RequestAttrs};
use ratelimit_testkit::valkey::{
    evalsha_stats, free_port, process_id, spawned, IsolatedProxy, ProxyMode, ValkeyServer,
};
use ratelimit_tests::support::http::{serve_axum, KeepAlive};
use ratelimit_tests::support::load::{ask, latencies, Answer, Load};
use ratelimit_tests::support::record::{Log, Recorder, Sample};
use ratelimit_tests::support::{unique, wall_ms, Latencies};
use ratelimit_tower::RateLimitLayer;
use ratelimit_valkey::{cluster, ValkeyBackend};

/// The fault tests take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DEADLINE: Duration = Duration::from_millis(50);
const MARGIN_MS: u64 = 150;
/// Longest acceptable answer: the deadline plus the margin.
const BOUND_MS: u64 = 50 + MARGIN_MS;
/// After a fault starts, requests already on the wire may still succeed.
const SETTLE_MS: u64 = 100;
const INSTANCES: usize = 2;
const CLIENTS: usize = 16;
const PATHS: &[&str] = &["/open", "/closed"];

const RULES: &str = r#"[
  {"id": "open", "expression": "http.request.uri.path eq \"/open\"",
   "algorithm": "fixed_window", "limit": 1000000, "period": "1s", "key": ["ip"],
   "fail_mode": "open"},
  {"id": "closed", "expression": "http.request.uri.path eq \"/closed\"",
   "algorithm": "fixed_window", "limit": 1000000, "period": "1s", "key": ["ip"],
   "fail_mode": "closed"},
  {"id": "local", "expression": "http.request.uri.path eq \"/local\"",
   "algorithm": "token_bucket", "limit": 10, "burst": 10, "period": "1h", "key": ["ip"],
   "fail_mode": "local"},
  {"id": "shared", "expression": "http.request.uri.path eq \"/shared\"",
   "algorithm": "token_bucket", "limit": 6, "burst": 6, "period": "1h", "key": ["ip"],
   "fail_mode": "closed"}
]"#;

fn rules() -> RuleSet {
    RuleSet::from_json(RULES).expect("rules")
}

/// Limiters, each with its own backend (own connections and breaker), all
/// recording into one log.
struct Fleet {
    limiters: Vec<Limiter>,
    log: Log,
}

async fn fleet(url: &str, n: usize, first_id: usize) -> Fleet {
    let log = Log::new();
    let prefix = unique("fault");
    let mut limiters = Vec::new();
    for i in 0..n {
        let backend = ValkeyBackend::builder(url)
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("backend");
        limiters.push(
            Limiter::builder(rules())
                // Subjects are checked below with the public test key.
                .hash_key(HashKey::DEFAULT)
                .backend(Recorder::new(backend, first_id + i, log.clone()))
                .fleet_size(StaticFleet(INSTANCES as u64))
                .build(),
        );
    }
    Fleet { limiters, log }
}

fn ip(a: u8, b: u8) -> IpAddr {
    IpAddr::from([192, 0, a, b])
}

fn ms(a: &Answer) -> u64 {
    a.latency_us.div_ceil(1000)
}

/// Every answer in time: at most the deadline plus the margin.
fn assert_latency(what: &str, answers: &[Answer]) -> Latencies {
    let l = latencies(answers);
    let slow: Vec<String> = answers
        .iter()
        .filter(|a| ms(a) > BOUND_MS)
        .take(5)
        .map(|a| {
            format!(
                "{} {} at {} took {} ms",
                a.instance,
                a.path,
                a.start_ms,
                ms(a)
            )
        })
        .collect();
    assert!(
        slow.is_empty(),
        "{what}: answers slower than {BOUND_MS} ms (deadline {DEADLINE:?} + {MARGIN_MS} ms): {slow:?}"
    );
    l
}

/// Requests that started and ended within `[from, to)` (start times are
/// whole ms rounded down, latencies rounded up: a request counted here
/// certainly ended before `to`).
fn within(answers: &[Answer], from: u64, to: u64) -> Vec<&Answer> {
    answers
        .iter()
        .filter(|a| a.start_ms >= from && a.start_ms + ms(a) < to)
        .collect()
}

/// While Valkey can't answer: `open` passes, `closed` is 503 with
/// `Retry-After: 1`. Returns how many of each were seen.
fn assert_fail_modes(what: &str, answers: &[Answer], from: u64, to: u64) -> (usize, usize) {
    let mut n = (0, 0);
    for a in within(answers, from, to) {
        match a.path {
            "/open" => {
                assert_eq!(a.outcome, Outcome::Forward, "{what}: fail_mode open: {a:?}");
                n.0 += 1;
            }
            "/closed" => {
                assert_eq!(
                    (a.outcome, a.retry_after),
                    (Outcome::Unavailable, Some(1)),
                    "{what}: fail_mode closed: {a:?}"
                );
                n.1 += 1;
            }
            _ => {}
        }
    }
    assert!(
        n.0 >= 20 && n.1 >= 20,
        "{what}: too few requests during the fault: {n:?}"
    );
    n
}

/// While Valkey answers, both rules pass (their limits are high).
///
/// This machine is shared and small: a stall of another process can fail
/// a few calls of a healthy Valkey (both instances at once). So up to 2% of
/// the requests may fail, provided each failure followed its fail_mode
/// (`closed`: 503 with `Retry-After: 1`); the failures are printed with the
/// backend calls around them. Returns (requests, failures).
fn assert_healthy(
    what: &str,
    answers: &[Answer],
    samples: &[Sample],
    from: u64,
    to: u64,
) -> (usize, usize) {
    let w = within(answers, from, to);
    let bad: Vec<&&Answer> = w.iter().filter(|a| a.outcome != Outcome::Forward).collect();
    for a in &bad {
        assert_eq!(
            (a.path, a.outcome, a.retry_after),
            ("/closed", Outcome::Unavailable, Some(1)),
            "{what}: a failure that did not follow its fail_mode"
        );
    }
    if let Some(a) = bad.first() {
        let errs: Vec<String> = samples
            .iter()
            .filter(|s| s.failed() && s.sent_ms + 200 >= a.start_ms && s.sent_ms <= a.start_ms + 50)
            .take(12)
            .map(|s| {
                format!(
                    "{}@{}+{}ms:{:?}",
                    s.instance,
                    s.sent_ms,
                    s.done_ms - s.sent_ms,
                    s.result
                )
            })
            .collect();
        eprintln!(
            "WARNING {what}: {} of {} requests failed while Valkey was up (window from {from}); \
             first {a:?}; backend calls around it: {}",
            bad.len(),
            w.len(),
            errs.join(", ")
        );
    }
    assert!(
        w.len() >= 20,
        "{what}: too few healthy requests: {}",
        w.len()
    );
    assert!(
        bad.len() * 50 <= w.len(),
        "{what}: {} of {} requests failed while Valkey was up",
        bad.len(),
        w.len()
    );
    (w.len(), bad.len())
}

/// `fail_mode: local` during the fault: each instance admits
/// `limit / fleet` = 10 / 2 = 5 of a fresh subject, then 429.
async fn assert_local_share(what: &str, fleet: &Fleet, who: IpAddr) -> Vec<Answer> {
    let mut all = Vec::new();
    for (i, limiter) in fleet.limiters.iter().enumerate() {
        let mut got = Vec::new();
        for _ in 0..7 {
            got.push(ask(limiter, i, "/local", who).await);
        }
        let outcomes: Vec<Outcome> = got.iter().map(|a| a.outcome).collect();
        let mut want = vec![Outcome::Forward; 5];
        want.extend([Outcome::Limited; 2]);
        assert_eq!(
            outcomes, want,
            "{what}: instance {i}, fail_mode local at 10 / 2 instances"
        );
        assert!(got[5].retry_after.unwrap_or(0) >= 1);
        all.extend(got);
    }
    all
}

/// Polls until every instance is answered by Valkey again; how long that took.
async fn wait_recovered(what: &str, fleet: &Fleet, since: u64) -> u64 {
    for (i, limiter) in fleet.limiters.iter().enumerate() {
        loop {
            let a = ask(limiter, i, "/closed", ip(250, i as u8)).await;
            if a.outcome == Outcome::Forward {
                break;
            }
            assert!(
                wall_ms() - since < 5_000,
                "{what}: instance {i} not recovered 5 s after the fault ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    wall_ms() - since
}

/// After recovery the count is shared again: 4 of a fresh subject on
/// instance 0 pass, then instance 1 admits only the 2 left of 6.
async fn assert_shared_again(what: &str, fleet: &Fleet, who: IpAddr) {
    wait_recovered(what, fleet, wall_ms()).await;
    let mut seen = Vec::new();
    for (i, n) in [(0usize, 4), (1, 4)] {
        for _ in 0..n {
            seen.push(ask(&fleet.limiters[i], i, "/shared", who).await.outcome);
        }
    }
    use Outcome::{Forward as F, Limited as L};
    assert_eq!(
        seen,
        vec![F, F, F, F, F, F, L, L],
        "{what}: after recovery, instance 1 must see instance 0's count"
    );
}

/// How the breaker of `instance` behaved over `[from, to]`: when it was
/// first seen open, and the calls that went out after that (the probes).
#[derive(Debug)]
struct Breaker {
    first_open_ms: u64,
    probes: Vec<u64>,
}

fn breaker(what: &str, samples: &[Sample], instance: usize, from: u64, to: u64) -> Breaker {
    let mine: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.instance == instance && s.sent_ms >= from && s.sent_ms < to)
        .collect();
    // The breaker was open by the time the first refused call returned: a
    // call that started after that and still went out is a probe. (A
    // call's start is recorded before it asks the breaker, so refusals'
    // start times do not bound the opening.)
    let first_open_ms = mine
        .iter()
        .filter(|s| s.result == Err(BackendErrorKind::BreakerOpen))
        .map(|s| s.done_ms)
        .min()
        .unwrap_or_else(|| panic!("{what}: instance {instance}: the breaker never opened"));
    let mut probes: Vec<&Sample> = mine
        .iter()
        .copied()
        .filter(|s| s.sent_ms > first_open_ms && s.result != Err(BackendErrorKind::BreakerOpen))
        .collect();
    // A probe is a call: the checks of one request's batch went out
    // together, as one call, and count once.
    probes.sort_by_key(|s| (s.sent_ms, s.call));
    probes.dedup_by_key(|s| s.call);
    // Each probe is let through 1 s after the previous one failed: it ends
    // at least 1 s after the previous one started.
    for w in probes.windows(2) {
        assert!(
            w[1].done_ms - w[0].sent_ms >= 999,
            "{what}: instance {instance}: probes {} ms apart while the breaker was open",
            w[1].done_ms - w[0].sent_ms
        );
    }
    let allowed = (to - first_open_ms) / 1000 + 1;
    assert!(
        probes.len() as u64 <= allowed,
        "{what}: instance {instance}: {} calls in {} ms with the breaker open",
        probes.len(),
        to - first_open_ms
    );
    if to - first_open_ms > 1_300 {
        assert!(
            !probes.is_empty(),
            "{what}: instance {instance}: no probe after 1 s"
        );
    }
    Breaker {
        first_open_ms,
        probes: probes.iter().map(|s| s.sent_ms).collect(),
    }
}

fn kinds(samples: &[Sample]) -> String {
    let count = |k: Option<BackendErrorKind>| {
        samples
            .iter()
            .filter(|s| match k {
                None => s.result.is_ok(),
                Some(k) => s.result == Err(k),
            })
            .count()
    };
    format!(
        "ok {}, timeout {}, connection {}, breaker open {}",
        count(None),
        count(Some(BackendErrorKind::Timeout)),
        count(Some(BackendErrorKind::Connection)),
        count(Some(BackendErrorKind::BreakerOpen))
    )
}

/// Checks the server ran no more `EVALSHA` than the instances sent: at
/// least one per answered check, at most one per check that may have
/// reached it. A timed-out check may have run (once); a check that failed
/// on a lost connection may have run only if `lost_may_have_run` (a cut
/// connection; not a refused or never-made one). A retry would exceed the
/// upper bound.
fn assert_not_retried(what: &str, ran: u64, samples: &[Sample], lost_may_have_run: bool) -> String {
    let count = |k: BackendErrorKind| samples.iter().filter(|s| s.result == Err(k)).count() as u64;
    let ok = samples.iter().filter(|s| s.result.is_ok()).count() as u64;
    let timeout = count(BackendErrorKind::Timeout);
    let lost = if lost_may_have_run {
        count(BackendErrorKind::Connection)
    } else {
        0
    };
    assert!(
        ok <= ran && ran <= ok + timeout + lost,
        "{what}: the server ran {ran} EVALSHA for {ok} answered checks, {timeout} timed out and \
         {lost} lost on a cut connection: a call was sent more than once"
    );
    format!("server ran {ran} EVALSHA for {ok} answered + {timeout} timed out + {lost} cut")
}

/// The server killed under load, then started again on the same port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_then_restarted_on_the_same_port() {
    let _turn = SERIAL.lock().await;
    let what = "kill";
    let port = free_port();
    let mut server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let fleet = fleet(server.url(), INSTANCES, 0).await;
    let load = Load::start(&fleet.limiters, CLIENTS, PATHS, 5, 1);
    tokio::time::sleep(Duration::from_millis(400)).await;

    let t_kill = wall_ms();
    server.kill();
    tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
    let local = assert_local_share(what, &fleet, ip(1, 1)).await;
    tokio::time::sleep(Duration::from_millis(1_800)).await;

    let t_restart = wall_ms();
    let server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let recovered_after = wait_recovered(what, &fleet, t_restart).await;
    let t_healthy = wall_ms();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = load.stop().await;
    assert_shared_again(what, &fleet, ip(1, 2)).await;

    let samples = fleet.log.samples();
    let lat = assert_latency(what, &[&answers[..], &local].concat());
    assert_healthy(what, &answers, &samples, 0, t_kill);
    let modes = assert_fail_modes(what, &answers, t_kill + SETTLE_MS, t_restart);
    assert_healthy(what, &answers, &samples, t_healthy, u64::MAX);
    let breakers: Vec<Breaker> = (0..INSTANCES)
        .map(|i| breaker(what, &samples, i, t_kill, t_restart))
        .collect();
    // Only the new server's counts: everything answered after the restart.
    let after: Vec<Sample> = samples
        .iter()
        .filter(|s| s.sent_ms >= t_restart)
        .cloned()
        .collect();
    let (calls, failed, rejected) = evalsha_stats(server.url()).await;
    let no_retry = assert_not_retried(what, calls - failed, &after, false);
    eprintln!(
        "fault {what}: {} answers, max {} ms (p99 {} ms); during the fault open {} x 200, closed {} \
         x 503 Retry-After 1, local 5 + 5 of 10; breaker first open at +{} ms, probes at {:?} ms after the kill; \
         recovered {recovered_after} ms after the restart; backend calls: {}; new server: {no_retry} \
         (evalsha calls {calls}, NOSCRIPT-failed {failed}, rejected {rejected})",
        answers.len(),
        lat.max(),
        lat.quantile(0.99),
        modes.0,
        modes.1,
        breakers[0].first_open_ms - t_kill,
        breakers
            .iter()
            .map(|b| b.probes.iter().map(|p| p - t_kill).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        kinds(&samples)
    );
}

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
    let recovered_after = wait_recovered(what, &fleet, t_pass).await;
    let t_healthy = wall_ms();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = load.stop().await;
    assert_shared_again(what, &fleet, ip(2, 2)).await;

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

async fn fleet_of_one(url: &str, id: usize) -> Fleet {
    fleet(url, 1, id).await
}

/// The server paused with SIGSTOP (its pid read from `INFO server`), then
/// continued with SIGCONT: every call times out within the deadline, and
/// the writes it queued run once when it continues, never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_with_sigstop_then_continued() {
    let _turn = SERIAL.lock().await;
    let what = "pause";
    let server = ValkeyServer::spawn_on(free_port()).unwrap_or_else(|e| panic!("{e}"));
    let pid = process_id(server.url()).await;
    assert_eq!(
        Some(pid),
        server.pid(),
        "INFO server process_id is the child"
    );
    let fleet = fleet(server.url(), INSTANCES, 0).await;
    let load = Load::start(&fleet.limiters, CLIENTS, PATHS, 5, 3);
    tokio::time::sleep(Duration::from_millis(400)).await;

    let t_stop = wall_ms();
    server.signal("STOP").unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
    let local = assert_local_share(what, &fleet, ip(3, 1)).await;
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let t_cont = wall_ms();
    server.signal("CONT").unwrap_or_else(|e| panic!("{e}"));
    let recovered_after = wait_recovered(what, &fleet, t_cont).await;
    let t_healthy = wall_ms();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = load.stop().await;
    assert_shared_again(what, &fleet, ip(3, 2)).await;

    let samples = fleet.log.samples();
    let lat = assert_latency(what, &[&answers[..], &local].concat());
    assert_healthy(what, &answers, &samples, 0, t_stop);
    let modes = assert_fail_modes(what, &answers, t_stop + SETTLE_MS, t_cont);
    assert_healthy(what, &answers, &samples, t_healthy, u64::MAX);
    for i in 0..INSTANCES {
        breaker(what, &samples, i, t_stop, t_cont);
    }
    let timeouts = samples
        .iter()
        .filter(|s| s.result == Err(BackendErrorKind::Timeout))
        .count();
    assert!(timeouts >= 5, "{what}: a paused server times calls out");
    let (calls, failed, _) = evalsha_stats(server.url()).await;
    let no_retry = assert_not_retried(what, calls - failed, &samples, false);
    eprintln!(
        "fault {what}: pid {pid}; {} answers, max {} ms (p99 {} ms); open {} x 200, closed {} x 503; \
         recovered {recovered_after} ms after SIGCONT; {}; {no_retry}",
        answers.len(),
        lat.max(),
        lat.quantile(0.99),
        modes.0,
        modes.1,
        kinds(&samples)
    );
}

/// Valkey slower than the deadline (a proxy holding every chunk 300 ms):
/// calls time out at the deadline, the breakers open and the bytes sent to
/// Valkey stop growing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_valkey_times_out_within_the_deadline() {
    let _turn = SERIAL.lock().await;
    let what = "slow";
    let server = spawned();
    let port = server.port().expect("spawned");
    let proxy = IsolatedProxy::start(format!("127.0.0.1:{port}"));
    let fleet = fleet(&proxy.url(), INSTANCES, 0).await;
    let load = Load::start(&fleet.limiters, CLIENTS, PATHS, 5, 4);
    tokio::time::sleep(Duration::from_millis(400)).await;

    let t_slow = wall_ms();
    proxy.set_mode(ProxyMode::Delay(Duration::from_millis(300)));
    tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
    let local = assert_local_share(what, &fleet, ip(4, 1)).await;
    // What was written before the breakers opened still trickles through
    // the proxy (one held chunk per 300 ms per connection, until each
    // connection is drained); after that only probes (one per instance per
    // second) may add bytes.
    tokio::time::sleep(until(t_slow + 1_000)).await;
    let (c1, b1) = (proxy.connections(), proxy.bytes_up());
    tokio::time::sleep(until(t_slow + 2_000)).await;
    let (c2, b2) = (proxy.connections(), proxy.bytes_up());
    tokio::time::sleep(until(t_slow + 2_300)).await;
    let t_pass = wall_ms();
    proxy.set_mode(ProxyMode::Pass);
    let recovered_after = wait_recovered(what, &fleet, t_pass).await;
    let t_healthy = wall_ms();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = load.stop().await;
    assert_shared_again(what, &fleet, ip(4, 2)).await;

    let samples = fleet.log.samples();
    let lat = assert_latency(what, &[&answers[..], &local].concat());
    assert_healthy(what, &answers, &samples, 0, t_slow);
    let modes = assert_fail_modes(what, &answers, t_slow + SETTLE_MS, t_pass);
    assert_healthy(what, &answers, &samples, t_healthy, u64::MAX);
    for i in 0..INSTANCES {
        breaker(what, &samples, i, t_slow, t_pass);
    }
    let sent_meanwhile = within(&answers, t_slow + 1_000, t_slow + 2_000).len();
    // A probe is a new connection and its handshake, a few hundred bytes.
    assert!(
        c2 - c1 <= 2 * INSTANCES as u64 && b2 - b1 <= 2 * INSTANCES as u64 * 1024,
        "{what}: with the breakers open, {} connections and {} bytes reached Valkey in 1 s",
        c2 - c1,
        b2 - b1
    );
    assert!(
        sent_meanwhile >= 100,
        "{what}: only {sent_meanwhile} requests"
    );
    let timeouts = samples
        .iter()
        .filter(|s| s.result == Err(BackendErrorKind::Timeout))
        .count();
    assert!(timeouts >= 5, "{what}: a slow server times calls out");
    // Held chunks reach the server late: wait for them before counting.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (calls, failed, _) = evalsha_stats(server.url()).await;
    let no_retry = assert_not_retried(what, calls - failed, &samples, false);
    eprintln!(
        "fault {what}: {} answers, max {} ms (p99 {} ms); open {} x 200, closed {} x 503; proxy over \
         1 s of slowness with breakers open: +{} connections, +{} bytes while {sent_meanwhile} \
         requests were answered; recovered {recovered_after} ms after Pass; {}; {no_retry}",
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

/// How long from now until wall-clock `t` (Unix ms); zero if past.
fn until(t: u64) -> Duration {
    Duration::from_millis(t.saturating_sub(wall_ms()))
}

/// A 3-primary cluster, one primary killed under load: subjects on the
/// other nodes are still counted (shared by both instances) and limited;
/// subjects on the dead node follow their rule's fail_mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_one_primary_down_fails_only_its_keys() {
    let _turn = SERIAL.lock().await;
    let what = "cluster";
    let mut cluster = ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}"));
    let log = Log::new();
    let prefix = unique("cl");
    let mut limiters = Vec::new();
    for i in 0..INSTANCES {
        let backend = ValkeyBackend::builder(cluster.url(0))
            .cluster(true)
            .cluster_seeds(cluster.urls())
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("cluster backend");
        limiters.push(
            Limiter::builder(rules())
                // Subjects are checked below with the public test key.
                .hash_key(HashKey::DEFAULT)
                .backend(Recorder::new(backend, i, log.clone()))
                .fleet_size(StaticFleet(INSTANCES as u64))
                .build(),
        );
    }
    // Two subjects per node; `shared` and `open` share the key parts, so
    // one subject lives in one slot for both.
    let set = rules();
    let rule = set.get("shared").expect("rule");
    let mut by_node: Vec<Vec<IpAddr>> = vec![Vec::new(); 3];
    for k in 0..=255u8 {
        let who = IpAddr::from([198, 18, 7, k]);
        let KeyOutcome::Subject(d) =
            subject(rule, &RequestAttrs::new(who), &HashKey::DEFAULT, false)
        else {
            panic!("no subject");
        };
        // The slot of the subject's key, whatever the key format.
        let check = ratelimit_core::backend::Check::new(
            rule.clone(),
            ratelimit_core::backend::namespace(rule).into(),
            d,
            rule.quota(1),
            None,
            None,
        );
        let slot = cluster::slot(ratelimit_valkey::key_of("rl:", &check).as_bytes());
        let node = cluster.node_of_slot(slot);
        if by_node[node].len() < 2 {
            by_node[node].push(who);
        }
    }
    assert!(by_node.iter().all(|v| v.len() == 2), "{by_node:?}");
    // Connect every instance to every node before the fault.
    for (i, l) in limiters.iter().enumerate() {
        for who in by_node.iter().flatten() {
            assert_eq!(ask(l, i, "/open", *who).await.outcome, Outcome::Forward);
        }
    }
    let t_kill = wall_ms();
    cluster.kill(1);
    tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
    // Every instance, concurrently, sends 6 `shared` (limit 6 per hour,
    // fail_mode closed) and 6 `open` checks for every subject.
    let mut tasks = tokio::task::JoinSet::new();
    for (i, l) in limiters.iter().enumerate() {
        for who in by_node.iter().flatten().copied() {
            let l = l.clone();
            tasks.spawn(async move {
                let mut out = Vec::new();
                for _ in 0..6 {
                    out.push(ask(&l, i, "/shared", who).await);
                    out.push(ask(&l, i, "/open", who).await);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                out
            });
        }
    }
    let mut answers = Vec::new();
    while let Some(r) = tasks.join_next().await {
        answers.extend(r.expect("a client task panicked"));
    }
    let lat = assert_latency(what, &answers);
    let mut lines = Vec::new();
    for (node, subjects) in by_node.iter().enumerate() {
        for who in subjects {
            let of = |path: &str| -> Vec<&Answer> {
                answers
                    .iter()
                    .filter(|a| a.ip == *who && a.path == path)
                    .collect()
            };
            let count = |v: &[&Answer], o: Outcome| v.iter().filter(|a| a.outcome == o).count();
            let shared = of("/shared");
            let open = of("/open");
            assert_eq!(
                count(&open, Outcome::Forward),
                12,
                "{what}: open on node {node}"
            );
            if node == 1 {
                assert_eq!(
                    count(&shared, Outcome::Unavailable),
                    12,
                    "{what}: {who} lives on the dead node: fail_mode closed"
                );
                assert!(shared.iter().all(|a| a.retry_after == Some(1)));
            } else {
                assert_eq!(
                    (
                        count(&shared, Outcome::Forward),
                        count(&shared, Outcome::Limited)
                    ),
                    (6, 6),
                    "{what}: {who} on live node {node}: counted over both instances, limit 6"
                );
            }
            lines.push(format!(
                "node {node} {who}: shared {} x 200 / {} x 429 / {} x 503",
                count(&shared, Outcome::Forward),
                count(&shared, Outcome::Limited),
                count(&shared, Outcome::Unavailable)
            ));
        }
    }
    let samples = log.samples();
    let after: Vec<Sample> = samples
        .iter()
        .filter(|s| s.sent_ms >= t_kill)
        .cloned()
        .collect();
    eprintln!(
        "fault {what}: node 1 of 3 killed; {} answers, max {} ms (p99 {} ms); {}; {}",
        answers.len(),
        lat.max(),
        lat.quantile(0.99),
        lines.join("; "),
        kinds(&after)
    );
}

/// Through the tower layer over HTTP, Valkey down: `open` answers 200,
/// `closed` 503 with `Retry-After: 1`, `local` 200 five times (10 / 2) then
/// 429; each within the bound; after recovery `closed` is 200 again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_layer_answers_by_fail_mode_over_http() {
    let _turn = SERIAL.lock().await;
    let what = "tower";
    let server = spawned();
    let port = server.port().expect("spawned");
    let proxy = IsolatedProxy::start(format!("127.0.0.1:{port}"));
    let f = fleet(&proxy.url(), 1, 0).await;
    let app = Router::new()
        .route("/open", get(|| async { "ok" }))
        .route("/closed", get(|| async { "ok" }))
        .route("/local", get(|| async { "ok" }))
        .layer(RateLimitLayer::new(f.limiters[0].clone()));
    let addr = serve_axum(app).await;
    let mut c = Timed {
        conn: KeepAlive::connect(addr).await.expect("connect"),
        took: Vec::new(),
    };
    assert_eq!(c.get("/closed").await.0, 200);
    proxy.set_mode(ProxyMode::Down);
    let mut seen = Vec::new();
    for _ in 0..10 {
        seen.push(("/open", c.get("/open").await));
        seen.push(("/closed", c.get("/closed").await));
    }
    let mut local = Vec::new();
    for _ in 0..7 {
        local.push(c.get("/local").await);
    }
    for (path, (status, retry)) in &seen {
        match *path {
            "/open" => assert_eq!(*status, 200, "{what}: open"),
            _ => assert_eq!(
                (*status, retry.as_deref()),
                (503, Some("1")),
                "{what}: closed"
            ),
        }
    }
    let statuses: Vec<u16> = local.iter().map(|r| r.0).collect();
    assert_eq!(
        statuses,
        vec![200, 200, 200, 200, 200, 429, 429],
        "{what}: local at 10 / 2"
    );
    assert!(local[5].1.is_some(), "{what}: 429 without Retry-After");
    proxy.set_mode(ProxyMode::Pass);
    let t_pass = Instant::now();
    loop {
        if c.get("/closed").await.0 == 200 {
            break;
        }
        assert!(
            t_pass.elapsed() < Duration::from_secs(5),
            "{what}: no recovery"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let slowest = c.took.iter().copied().max().unwrap_or_default();
    assert!(
        slowest <= Duration::from_millis(BOUND_MS),
        "{what}: an HTTP answer took {slowest:?}"
    );
    eprintln!(
        "fault {what}: Valkey down through the layer: open 200, closed 503 Retry-After 1, local \
         200 x 5 then 429; {} HTTP answers, slowest {slowest:?}; recovered {:?} after Pass",
        c.took.len(),
        t_pass.elapsed()
    );
}

/// A keep-alive HTTP connection that times every answer.
struct Timed {
    conn: KeepAlive,
    took: Vec<Duration>,
}

impl Timed {
    async fn get(&mut self, path: &str) -> (u16, Option<String>) {
        let t = Instant::now();
        let r = self.conn.get(path, &[]).await.expect("an answer");
        self.took.push(t.elapsed());
        r
    }
}
