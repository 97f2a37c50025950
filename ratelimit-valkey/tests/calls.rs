//! The commands the scripts make (`INFO commandstats` counts the ones a
//! script runs): a batch reads Valkey's `TIME` once for all its checks, an
//! admitted token-bucket count reads and writes its key in three commands,
//! and a refused token-bucket check writes nothing.

use std::time::Duration;

use ratelimit_core::backend::{Backend, Batch, Check};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::valkey::{calls, connect, injected, spawned};
use ratelimit_valkey::ValkeyBackend;
use redis::aio::MultiplexedConnection;

async fn reset(conn: &mut MultiplexedConnection) {
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(conn)
        .await
        .expect("RESETSTAT");
}

#[tokio::test]
async fn a_batch_reads_the_time_once() {
    let server = spawned();
    let backend = ValkeyBackend::builder(server.url())
        .key_prefix("calls:")
        .build()
        .await
        .expect("backend");
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let m = Duration::from_secs(60);
    let b = |id: &str| RuleBuilder::new(id).key(["ip"]);
    let rules = [
        b("a").sliding_window(10, m).build().expect("rule"),
        b("b").token_bucket(10, m, 10).build().expect("rule"),
        b("c").fixed_window(10, m).build().expect("rule"),
    ];
    let checks: Vec<Check> = rules
        .iter()
        .map(|r| check_of(&t, r, "203.0.113.7", 1, None))
        .collect();
    let batch = Batch::new(0, checks);
    backend.check(&batch).await;
    reset(&mut conn).await;
    let out = backend.check(&batch).await;
    assert!(out
        .iter()
        .all(|r| r.as_ref().is_ok_and(|d| d.remaining == 8)));
    assert_eq!(calls(&mut conn, "time").await, 1, "one TIME for 3 checks");
    assert_eq!(calls(&mut conn, "evalsha").await, 1);
}

/// Refused without a penalty, the bucket's key stays as it is: the level
/// it holds drains to the same value as a level stored now would.
#[tokio::test]
async fn a_refused_token_bucket_check_writes_nothing() {
    let server = spawned();
    let backend = injected(server.url()).await;
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let rule = RuleBuilder::new("tb")
        .key(["ip"])
        .token_bucket(2, Duration::from_secs(60), 2)
        .build()
        .expect("rule");
    let check = check_of(&t, &rule, "203.0.113.7", 1, None);
    let key = backend.key_of(&check);
    let at = |ms: u64| Batch::new(T0 + ms, vec![check.clone()]);
    for ms in [0, 1] {
        assert!(backend.check(&at(ms)).await[0]
            .as_ref()
            .is_ok_and(|d| d.allowed));
    }
    let state = |conn: &mut MultiplexedConnection| {
        let mut pipe = redis::pipe();
        pipe.cmd("GET").arg(&key).cmd("PEXPIRETIME").arg(&key);
        let conn = conn.clone();
        async move {
            let mut conn = conn;
            let s: (String, i64) = pipe.query_async(&mut conn).await.expect("GET");
            s
        }
    };
    let before = state(&mut conn).await;
    reset(&mut conn).await;
    // 10 s later a third of a token has refilled: refused, 20 s to wait.
    let refused = backend
        .check(&at(10_001))
        .await
        .remove(0)
        .expect("answered");
    assert!(!refused.allowed);
    assert_eq!(refused.retry_after_ms, 19_999);
    let writes = ["incrby", "pexpireat", "set", "del", "getex"];
    for w in writes {
        assert_eq!(calls(&mut conn, w).await, 0, "{w}");
    }
    assert_eq!(state(&mut conn).await, before);
    // The level drains as if it had been stored: refused 1 ms before the
    // Retry-After, admitted at it.
    let early = backend
        .check(&at(29_999))
        .await
        .remove(0)
        .expect("answered");
    assert_eq!(early.retry_after_ms, 1, "{early:?}");
    let later = backend
        .check(&at(30_000))
        .await
        .remove(0)
        .expect("answered");
    assert!(later.allowed, "{later:?}");
    assert_eq!(later.remaining, 0);
}

/// An admitted count on a live bucket: the expiry read, then GETEX, which
/// reads the level and moves the expiry to where the count puts it (exact
/// here: the limit divides the period), then INCRBY; no GET, no PEXPIREAT.
#[tokio::test]
async fn an_admitted_token_bucket_count_is_three_commands() {
    let server = spawned();
    let backend = injected(server.url()).await;
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let rule = RuleBuilder::new("tb3")
        .key(["ip"])
        .token_bucket(10, Duration::from_secs(60), 5)
        .build()
        .expect("rule");
    let check = check_of(&t, &rule, "203.0.113.7", 1, None);
    let at = |ms: u64| Batch::new(T0 + ms, vec![check.clone()]);
    assert!(backend.check(&at(0)).await[0]
        .as_ref()
        .is_ok_and(|d| d.allowed));
    reset(&mut conn).await;
    let d = backend.check(&at(1_000)).await.remove(0).expect("answered");
    assert!(d.allowed);
    assert_eq!(d.remaining, 3);
    let expected = [
        ("pexpiretime", 1),
        ("getex", 1),
        ("incrby", 1),
        ("get", 0),
        ("pexpireat", 0),
        ("del", 0),
        ("set", 0),
    ];
    for (command, n) in expected {
        assert_eq!(calls(&mut conn, command).await, n, "{command}");
    }
    // The key expires when the bucket is full again: 2 tokens spent at
    // 1 s less 1 s refilled (at 10 a minute, 6 s each).
    let key = backend.key_of(&check);
    let left: i64 = redis::cmd("PEXPIRETIME")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("PEXPIRETIME");
    let offset = 1i64 << 42;
    assert_eq!(left - offset - (T0 as i64 + 1_000), 11_000);
}
