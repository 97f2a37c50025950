//! One Valkey server failing under load: killed and started again on the
//! same port, paused with SIGSTOP / SIGCONT, made slow (a proxy delaying
//! past the deadline).
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

use std::time::Duration;

use ratelimit_core::backend::BackendErrorKind;
use ratelimit_testkit::valkey::{
    evalsha_stats, free_port, process_id, spawned, IsolatedProxy, ProxyMode, ValkeyServer,
};
use ratelimit_tests::support::fault_answers::*;
use ratelimit_tests::support::fault_calls::*;
use ratelimit_tests::support::faults::*;
use ratelimit_tests::support::load::Load;
use ratelimit_tests::support::record::Sample;
use ratelimit_tests::support::wall_ms;

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
    let (recovered_after, t_healthy, answers) =
        recover(what, &fleet, load, t_restart, ip(1, 2)).await;

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
    let (recovered_after, t_healthy, answers) = recover(what, &fleet, load, t_cont, ip(3, 2)).await;

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
    let (recovered_after, t_healthy, answers) = recover(what, &fleet, load, t_pass, ip(4, 2)).await;

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
