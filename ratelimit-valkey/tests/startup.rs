//! Start-up with Valkey down: the backend builds, checks fail with a
//! `Connection` error naming the node (so fail modes answer), and it
//! connects once Valkey is back; `require_connection` fails the build with
//! an error naming the address. The same for a cluster's slot map.

use std::time::Duration;

use ratelimit_core::backend::{Backend, BackendErrorKind};
use ratelimit_core::rules::{FailMode, RuleBuilder, RuleSet};
use ratelimit_core::{Limiter, Outcome, RequestAttrs};
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode, ValkeyServer};
use ratelimit_valkey::{Error, ValkeyBackend};

/// A loopback port nothing listens on.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

fn rule(fail_mode: FailMode) -> ratelimit_core::rules::Rule {
    RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .fail_mode(fail_mode)
        .build()
        .expect("rule")
}

#[tokio::test]
async fn a_backend_builds_with_valkey_down_and_fail_open_rules_answer() {
    let port = dead_port();
    let backend = ValkeyBackend::builder(format!("valkey://127.0.0.1:{port}"))
        .key_prefix(unique("s"))
        .build()
        .await
        .unwrap_or_else(|e| panic!("builds with Valkey down: {e}"));
    let check = check_of(
        &template().await,
        &rule(FailMode::Open),
        "203.0.113.7",
        1,
        None,
    );
    let e = one(&backend, &check, T0).await.expect_err("down");
    assert_eq!(e.kind(), BackendErrorKind::Connection, "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("valkey at 127.0.0.1:{port}"))
            && text.contains("connection refused"),
        "the error names the node and the cause: {text}"
    );
    let limiter = Limiter::builder(RuleSet::from_rules(vec![rule(FailMode::Open)]).expect("rules"))
        .backend(backend)
        .build();
    let v = limiter
        .check(&RequestAttrs::new("203.0.113.7".parse().expect("ip")))
        .await;
    assert_eq!(v.outcome, Outcome::Forward, "fail_mode open answers");
}

#[tokio::test]
async fn require_connection_fails_the_build_naming_the_address() {
    let port = dead_port();
    let e = ValkeyBackend::builder(format!("valkey://127.0.0.1:{port}"))
        .require_connection(true)
        .build()
        .await
        .expect_err("Valkey is down");
    assert!(matches!(e, Error::Connect { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("valkey at 127.0.0.1:{port}: connection refused")
    );
}

/// Polls `f` until it holds, for at most 10 s (a bound, not a timing).
async fn eventually<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen within 10 s");
}

#[tokio::test]
async fn the_backend_connects_once_valkey_is_back() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let proxy = ChaosProxy::start(format!("127.0.0.1:{}", server.port().expect("port")))
        .await
        .expect("proxy");
    proxy.set_mode(ProxyMode::Down);
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("s"))
        .injected_time(true)
        .build()
        .await
        .expect("builds while Valkey is down");
    assert_eq!(backend.hash_key(), None, "not read yet");
    let check = check_of(
        &template().await,
        &rule(FailMode::Open),
        "203.0.113.7",
        1,
        None,
    );
    for _ in 0..10 {
        let e = one(&backend, &check, T0).await.expect_err("down");
        assert_eq!(e.kind(), BackendErrorKind::Connection, "{e}");
    }
    proxy.set_mode(ProxyMode::Pass);
    eventually("an answer after Valkey came back", || async {
        one(&backend, &check, T0).await.is_ok()
    })
    .await;
    assert!(backend.hash_key().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_backend_builds_before_its_slot_map_is_known() {
    let cluster = ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}"));
    let proxy = ChaosProxy::start(format!("127.0.0.1:{}", cluster.port(0)))
        .await
        .expect("proxy");
    proxy.set_mode(ProxyMode::Down);
    let build = |require: bool| {
        ValkeyBackend::builder(proxy.url())
            .cluster(true)
            .key_prefix(unique("s"))
            .injected_time(true)
            .connect_timeout(Duration::from_millis(500))
            .require_connection(require)
            .build()
    };
    let e = build(true).await.expect_err("no seed answers");
    assert!(matches!(e, Error::Topology(_)), "{e:?}");
    let proxy_addr = proxy.url().trim_start_matches("redis://").to_owned();
    assert!(
        e.to_string().contains(&proxy_addr),
        "names the seed node: {e}"
    );

    let backend = build(false).await.expect("builds before the slot map");
    let check = check_of(
        &template().await,
        &rule(FailMode::Open),
        "203.0.113.7",
        1,
        None,
    );
    let e = one(&backend, &check, T0).await.expect_err("no slot map");
    assert_eq!(e.kind(), BackendErrorKind::Connection, "{e}");
    proxy.set_mode(ProxyMode::Pass);
    eventually("an answer once the slot map is read", || async {
        one(&backend, &check, T0).await.is_ok()
    })
    .await;
}
