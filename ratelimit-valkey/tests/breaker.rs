//! The circuit breaker: 5 failures open it, 1 s later one probe, recovery
//! closes it; no call is ever retried (the server's `INFO commandstats`
//! counts exactly the checks that were answered).
#![allow(clippy::print_stderr)] // prints what it measures, for the issue notes

use std::time::Duration;

use ratelimit_core::backend::BackendErrorKind;
use ratelimit_core::rules::RuleBuilder;
use ratelimit_core::ManualClock;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ran, ChaosProxy, ProxyMode};
use ratelimit_valkey::ValkeyBackend;

#[tokio::test]
async fn five_failures_open_then_one_probe_then_recovery_and_nothing_is_retried() {
    let server = ratelimit_testkit::valkey::spawned();
    let port = server.port().expect("spawned");
    let proxy = ChaosProxy::start(format!("127.0.0.1:{port}"))
        .await
        .expect("proxy");
    let clock = ManualClock::default();
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("b"))
        .injected_time(true)
        .deadline(Duration::from_millis(300))
        .breaker_clock(clock.clone())
        .build()
        .await
        .expect("backend");
    let mut conn = connect(server.url()).await;
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(1000, Duration::from_secs(60))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.7", 1, None);
    let mut answered = 0;
    assert!(one(&backend, &check, T0).await.is_ok());
    answered += 1;

    proxy.set_mode(ProxyMode::Down);
    for i in 0..5 {
        let e = one(&backend, &check, T0).await.expect_err("down");
        assert_eq!(e.kind(), BackendErrorKind::Connection, "failure {i}: {e}");
    }
    let connections = proxy.connections();
    for _ in 0..3 {
        let e = one(&backend, &check, T0).await.expect_err("open");
        assert_eq!(e.kind(), BackendErrorKind::BreakerOpen);
    }
    assert_eq!(
        proxy.connections(),
        connections,
        "an open breaker does not call"
    );

    proxy.set_mode(ProxyMode::Pass);
    clock.advance(Duration::from_millis(999));
    let e = one(&backend, &check, T0).await.expect_err("still open");
    assert_eq!(e.kind(), BackendErrorKind::BreakerOpen);
    clock.advance(Duration::from_millis(1));
    let probe = one(&backend, &check, T0)
        .await
        .expect("the probe goes through");
    answered += 1;
    assert_eq!(probe.remaining, 1000 - answered);
    for _ in 0..3 {
        assert!(one(&backend, &check, T0).await.is_ok(), "closed again");
        answered += 1;
    }
    assert_eq!(
        ran(&mut conn, "evalsha").await,
        answered,
        "each answered check ran once"
    );
}

#[tokio::test]
async fn a_failed_probe_opens_the_breaker_again() {
    let server = ratelimit_testkit::valkey::spawned();
    let port = server.port().expect("spawned");
    let proxy = ChaosProxy::start(format!("127.0.0.1:{port}"))
        .await
        .expect("proxy");
    let clock = ManualClock::default();
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("b"))
        .injected_time(true)
        .breaker_clock(clock.clone())
        .build()
        .await
        .expect("backend");
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.8", 1, None);
    proxy.set_mode(ProxyMode::Down);
    for _ in 0..5 {
        assert!(one(&backend, &check, T0).await.is_err());
    }
    clock.advance(Duration::from_secs(1));
    let e = one(&backend, &check, T0).await.expect_err("probe fails");
    assert_eq!(e.kind(), BackendErrorKind::Connection);
    let e = one(&backend, &check, T0).await.expect_err("open again");
    assert_eq!(e.kind(), BackendErrorKind::BreakerOpen);
}

/// Valkey accepts connections and never answers, its connections are gone
/// and the breaker is open: the request that carries the probe fails
/// within its own deadline, not after the connect time-out (issue 27,
/// item 3).
#[tokio::test]
async fn the_probe_fails_within_its_deadline_when_valkey_accepts_and_never_answers() {
    let server = ratelimit_testkit::valkey::spawned();
    let port = server.port().expect("spawned");
    let proxy = ChaosProxy::start(format!("127.0.0.1:{port}"))
        .await
        .expect("proxy");
    let clock = ManualClock::default();
    let deadline = Duration::from_millis(100);
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("b"))
        .injected_time(true)
        .deadline(deadline)
        .connect_timeout(Duration::from_secs(3))
        .breaker_clock(clock.clone())
        .build()
        .await
        .expect("backend");
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.9", 1, None);
    assert!(one(&backend, &check, T0).await.is_ok());
    // Every connection cut: 5 failures open the breaker.
    proxy.set_mode(ProxyMode::Down);
    for _ in 0..5 {
        assert!(one(&backend, &check, T0).await.is_err());
    }
    // Connections are accepted again, and nothing is ever answered.
    proxy.set_mode(ProxyMode::Delay(Duration::from_secs(60)));
    clock.advance(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let e = one(&backend, &check, T0)
        .await
        .expect_err("the probe fails");
    let took = started.elapsed();
    eprintln!("the probe failed after {took:?} (deadline {deadline:?}): {e}");
    assert!(
        took < deadline + Duration::from_millis(400),
        "the probe took {took:?} (deadline {deadline:?}, connect time-out 3 s): {e}"
    );
    let e = one(&backend, &check, T0).await.expect_err("open again");
    assert_eq!(e.kind(), BackendErrorKind::BreakerOpen);
}
