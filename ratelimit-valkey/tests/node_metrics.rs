//! The per-node metrics: round trips by result, their durations, and the
//! breaker's state as a gauge that goes to 1 when it opens and back to 0
//! when a probe closes it. One test in this binary: it installs the global
//! recorder.

use std::collections::HashMap;
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_core::ManualClock;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode};
use ratelimit_valkey::ValkeyBackend;

/// `name{label=value,...}` → value, for the metrics of `node`.
fn read(s: &Snapshotter, node: &str) -> HashMap<String, DebugValue> {
    s.snapshot()
        .into_vec()
        .into_iter()
        .filter(|(k, ..)| {
            k.key()
                .labels()
                .any(|l| l.key() == "node" && l.value() == node)
        })
        .map(|(k, _, _, v)| {
            let mut labels: Vec<String> = k
                .key()
                .labels()
                .filter(|l| l.key() != "node")
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            (format!("{}{{{}}}", k.key().name(), labels.join(",")), v)
        })
        .collect()
}

fn counter(m: &HashMap<String, DebugValue>, k: &str) -> u64 {
    match m.get(k) {
        Some(DebugValue::Counter(n)) => *n,
        other => panic!("{k}: {other:?} in {m:?}"),
    }
}

fn gauge(m: &HashMap<String, DebugValue>, k: &str) -> f64 {
    match m.get(k) {
        Some(DebugValue::Gauge(g)) => g.into_inner(),
        other => panic!("{k}: {other:?} in {m:?}"),
    }
}

#[tokio::test]
async fn node_metrics_follow_round_trips_and_the_breaker() {
    let recorder = DebuggingRecorder::new();
    let snapshots = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this binary");

    let server = ratelimit_testkit::valkey::spawned();
    let port = server.port().expect("spawned");
    let proxy = ChaosProxy::start(format!("127.0.0.1:{port}"))
        .await
        .expect("proxy");
    let node = proxy.url().trim_start_matches("redis://").to_owned();
    let clock = ManualClock::default();
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("m"))
        .injected_time(true)
        .deadline(Duration::from_millis(300))
        .breaker_clock(clock.clone())
        .build()
        .await
        .expect("backend");
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(1000, Duration::from_secs(60))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.9", 1, None);

    for _ in 0..2 {
        assert!(one(&backend, &check, T0).await.is_ok());
    }
    proxy.set_mode(ProxyMode::Down);
    for _ in 0..5 {
        assert!(one(&backend, &check, T0).await.is_err());
    }
    assert!(one(&backend, &check, T0).await.is_err(), "refused: open");
    let m = read(&snapshots, &node);
    assert_eq!(counter(&m, "ratelimit_valkey_calls_total{result=ok}"), 2);
    assert_eq!(counter(&m, "ratelimit_valkey_calls_total{result=error}"), 5);
    assert_eq!(
        counter(&m, "ratelimit_valkey_calls_total{result=breaker_open}"),
        1
    );
    assert_eq!(counter(&m, "ratelimit_valkey_breaker_open_total{}"), 1);
    assert_eq!(gauge(&m, "ratelimit_valkey_breaker_open{}"), 1.0, "open");
    match m.get("ratelimit_valkey_call_duration_seconds{}") {
        Some(DebugValue::Histogram(v)) => assert!(v.len() >= 2, "the answered round trips: {v:?}"),
        other => panic!("no durations: {other:?}"),
    }

    // The snapshot reset the gauge to 0: a failed probe sets it to 1 again,
    // and only the successful probe after it may bring it back to 0.
    clock.advance(Duration::from_secs(1));
    assert!(one(&backend, &check, T0).await.is_err(), "the probe fails");
    proxy.set_mode(ProxyMode::Pass);
    clock.advance(Duration::from_secs(1));
    assert!(
        one(&backend, &check, T0).await.is_ok(),
        "the probe closes it"
    );
    let m = read(&snapshots, &node);
    assert_eq!(
        counter(&m, "ratelimit_valkey_breaker_open_total{}"),
        1,
        "opened once more"
    );
    assert_eq!(gauge(&m, "ratelimit_valkey_breaker_open{}"), 0.0, "closed");
}
