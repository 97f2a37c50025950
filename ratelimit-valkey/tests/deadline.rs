//! A delayed proxy makes calls time out within the deadline plus a small
//! margin, answering `Timeout`, and the late call is not sent again.

use std::time::{Duration, Instant};

use ratelimit_core::backend::{Backend, BackendErrorKind, Batch};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ran, ChaosProxy, ProxyMode, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

#[tokio::test]
async fn a_slow_node_times_out_within_the_deadline() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let port = server.port().expect("spawned");
    let proxy = ChaosProxy::start(format!("127.0.0.1:{port}"))
        .await
        .expect("proxy");
    let deadline = Duration::from_millis(50);
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("d"))
        .injected_time(true)
        .deadline(deadline)
        .build()
        .await
        .expect("backend");
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .build()
        .expect("rule");
    let checks = vec![
        check_of(&t, &rule, "203.0.113.7", 1, None),
        check_of(&t, &rule, "203.0.113.8", 1, None),
    ];
    // The batch script and the one-check script loaded (a NOSCRIPT reply
    // behind the delay would come too late to load it), with subjects of
    // their own: on a busy machine a first call (its NOSCRIPT, the load,
    // the call again) may take longer than the 50 ms deadline, so it is
    // tried again until it answers.
    let warmup = vec![
        check_of(&t, &rule, "203.0.113.9", 1, None),
        check_of(&t, &rule, "203.0.113.10", 1, None),
    ];
    let mut warm = Vec::new();
    for _ in 0..20 {
        warm = backend.check(&Batch::new(T0, warmup.clone())).await;
        warm.push(one(&backend, &warmup[0], T0).await);
        if warm.iter().all(Result::is_ok) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(warm.iter().all(Result::is_ok), "{warm:?}");
    let before = ran(&mut conn, "evalsha").await;

    proxy.set_mode(ProxyMode::Delay(Duration::from_millis(300)));
    let started = Instant::now();
    let out = backend.check(&Batch::new(T0, checks.clone())).await;
    let took = started.elapsed();
    assert!(
        took < deadline + Duration::from_millis(40),
        "answered after {took:?}"
    );
    for r in &out {
        let e = r.as_ref().expect_err("timed out");
        assert_eq!(e.kind(), BackendErrorKind::Timeout);
        assert!(e.is_timeout());
    }
    // The late call (one batch call for both checks) reaches the server
    // (it may have counted) but is never sent again.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(ran(&mut conn, "evalsha").await - before, 1);
    proxy.set_mode(ProxyMode::Pass);
    let d = one(&backend, &checks[0], T0).await.expect("answers again");
    assert_eq!(d.remaining, 8, "the timed-out call did count, once");
}
