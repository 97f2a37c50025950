//! Reconnecting happens in the background, never inside a call's deadline:
//! with 15 ms of latency each way, connection set-up plus the call exceed
//! the 50 ms deadline, so a reconnect made inside the call was cancelled
//! every time and the backend never recovered. Each node keeps a fixed set
//! of connections, remade one by one.

use std::time::Duration;

use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::connect as raw;
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

fn rule() -> ratelimit_core::rules::Rule {
    RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(1_000_000, Duration::from_secs(60))
        .build()
        .expect("rule")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_dropped_connection_calls_recover_under_latency() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let proxy = ChaosProxy::start(format!("127.0.0.1:{}", server.port().expect("port")))
        .await
        .expect("proxy");
    let backend = ValkeyBackend::builder(proxy.url())
        .key_prefix(unique("r"))
        .injected_time(true)
        .deadline(Duration::from_millis(50))
        .build()
        .await
        .expect("backend");
    let check = check_of(&template().await, &rule(), "203.0.113.7", 1, None);
    // Loads the script (NOSCRIPT costs a second round trip; on a busy
    // machine the first call may pass the 50 ms deadline: tried again).
    let mut loaded = false;
    for _ in 0..20 {
        loaded = one(&backend, &check, T0).await.is_ok();
        if loaded {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(loaded, "the script loads");
    proxy.set_mode(ProxyMode::Delay(Duration::from_millis(15)));
    let mut warm = 0;
    for _ in 0..5 {
        warm += usize::from(one(&backend, &check, T0).await.is_ok());
    }
    assert!(warm > 0, "warm calls fit in the deadline");

    // One dropped connection (every one, in fact), latency unchanged.
    proxy.set_mode(ProxyMode::Down);
    proxy.set_mode(ProxyMode::Delay(Duration::from_millis(15)));
    let mut answered = 0;
    let mut calls = 0;
    // At most 5 s (a bound, not a timing): stop at the first few answers.
    while answered < 3 && calls < 100 {
        calls += 1;
        answered += usize::from(one(&backend, &check, T0).await.is_ok());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        answered >= 3,
        "{answered} of {calls} calls answered after the connection dropped"
    );
}

/// The clients connected to `conn`'s server, less `conn` itself.
async fn clients(conn: &mut redis::aio::MultiplexedConnection) -> Vec<u64> {
    let me: u64 = redis::cmd("CLIENT")
        .arg("ID")
        .query_async(conn)
        .await
        .expect("id");
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(conn)
        .await
        .expect("list");
    list.lines()
        .filter_map(|l| l.strip_prefix("id=")?.split(' ').next()?.parse().ok())
        .filter(|&id| id != me)
        .collect()
}

#[tokio::test]
async fn each_node_keeps_its_connections_and_remakes_a_killed_one_alone() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let mut conn = raw(server.url()).await;
    let backend = ValkeyBackend::builder(server.url())
        .key_prefix(unique("r"))
        .injected_time(true)
        .connections(3)
        .build()
        .await
        .expect("backend");
    let ids = clients(&mut conn).await;
    assert_eq!(ids.len(), 3, "three connections: {ids:?}");
    let check = check_of(&template().await, &rule(), "203.0.113.7", 1, None);
    for _ in 0..6 {
        assert!(one(&backend, &check, T0).await.is_ok());
    }

    let _: u64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(ids[0])
        .query_async(&mut conn)
        .await
        .expect("kill");
    // Round robin: at most the call on the killed connection fails.
    let mut failed = 0;
    for _ in 0..6 {
        failed += usize::from(one(&backend, &check, T0).await.is_err());
    }
    assert!(failed <= 1, "{failed} of 6 calls failed");
    let mut now = Vec::new();
    for _ in 0..200 {
        now = clients(&mut conn).await;
        if now.len() == 3 && !now.contains(&ids[0]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(now.len(), 3, "remade in the background: {now:?}");
    assert!(
        ids[1..].iter().all(|id| now.contains(id)),
        "the other connections were kept: {ids:?} then {now:?}"
    );
}
