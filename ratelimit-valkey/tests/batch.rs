//! A request's checks travel as one script call (per hash slot in a
//! cluster): one `EVALSHA` per request on a standalone server, one per
//! slot on a cluster, a redirect taking a slot's checks together; one
//! check's error, or its own bad argument (its line is the script's error
//! as `-ERR message`), leaves the others' decisions as they are.

use std::time::Duration;

use ratelimit_core::backend::{Backend, BackendErrorKind, Batch, Check};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{
    calls, connect, exists, injected, injected_cluster, load_script, scripts_run, server, spawned,
    ValkeyServer,
};
use ratelimit_valkey::{batch_script_source, cluster, key_of};

fn rules() -> [Rule; 3] {
    let m = Duration::from_secs(60);
    let b = |id: &str| RuleBuilder::new(unique(id)).key(["ip"]);
    [
        b("sw").sliding_window(5, m).build().expect("rule"),
        b("tb").token_bucket(5, m, 5).build().expect("rule"),
        b("fw").fixed_window(5, m).build().expect("rule"),
    ]
}

fn remaining(
    out: &[Result<ratelimit_core::algorithm::Decision, ratelimit_core::backend::BackendError>],
) -> Vec<Option<u64>> {
    out.iter()
        .map(|r| r.as_ref().ok().map(|d| d.remaining))
        .collect()
}

/// A key of the wrong type under one check: that check answers its error
/// (`WRONGTYPE`), the checks before and after it are decided and counted
/// once, in the same script call.
#[tokio::test]
async fn a_checks_error_leaves_the_others_decided() {
    // A server of its own: its EVALSHA count is this test's.
    let server = spawned();
    let backend = injected(server.url()).await;
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let checks: Vec<Check> = rules()
        .iter()
        .map(|r| check_of(&t, r, "203.0.113.7", 1, None))
        .collect();
    let bad = backend.key_of(&checks[1]);
    // A list with an expiry in (injected) time: read, not taken as absent.
    let mut pipe = redis::pipe();
    pipe.cmd("RPUSH").arg(&bad).arg("x").ignore();
    pipe.cmd("PEXPIREAT")
        .arg(&bad)
        .arg(T0 + (1 << 42) + 600_000)
        .ignore();
    let () = pipe.query_async(&mut conn).await.expect("RPUSH, PEXPIREAT");
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .expect("RESETSTAT");
    let batch = Batch::new(T0, checks);
    for round in 0..2u64 {
        let out = backend.check(&batch).await;
        assert_eq!(remaining(&out), [Some(4 - round), None, Some(4 - round)]);
        let e = out[1].as_ref().expect_err("the list");
        assert_eq!(e.kind(), BackendErrorKind::Protocol);
        assert!(e.to_string().contains("WRONGTYPE"), "{e}");
    }
    // One call per request, the first answered NOSCRIPT on this fresh
    // server (and sent again after SCRIPT LOAD). A call whose reply holds
    // an error counts as failed in Valkey's stats: count them all.
    assert_eq!(calls(&mut conn, "evalsha").await, 3, "one call per request");
}

/// The batch script checks its arguments as a whole: a call it cannot
/// read is refused before any check runs.
#[tokio::test]
async fn a_malformed_batch_call_runs_nothing() {
    let server = server();
    let mut conn = connect(server.url()).await;
    let sha = load_script(&mut conn, batch_script_source()).await;
    let key = unique("malformed");
    // Two keys, the arguments of one sliding-window check.
    let r: redis::RedisResult<redis::Value> = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(2)
        .arg(&key)
        .arg(format!("{key}2"))
        .arg(&[2, 10, 60_000][..])
        .arg(T0)
        .arg(0)
        .query_async(&mut conn)
        .await;
    let e = r.expect_err("refused");
    assert!(e.to_string().contains("argument"), "{e}");
    assert!(!exists(&mut conn, &key).await);
}

/// Two sliding window checks in one batch call, the second with a mode the
/// scripts do not know (its head `27`, mode 7): its line is `-ERR` and the
/// script's message, the first is decided and counted, the second's key is
/// not written.
#[tokio::test]
async fn a_checks_bad_argument_is_its_err_line() {
    let server = server();
    let mut conn = connect(server.url()).await;
    let sha = load_script(&mut conn, batch_script_source()).await;
    let (good, bad) = (unique("good"), unique("bad"));
    let reply: String = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(2)
        .arg(&good)
        .arg(&bad)
        .arg(&[2, 10, 60_000][..])
        .arg(&[27, 10, 60_000][..])
        .arg(T0)
        .arg(1u64 << 42)
        .query_async(&mut conn)
        .await
        .expect("EVALSHA");
    let lines: Vec<&str> = reply.lines().collect();
    assert_eq!(lines.len(), 2, "{reply}");
    assert!(lines[0].starts_with("1 0 9 "), "{reply}");
    assert!(lines[1].starts_with("-ERR "), "{reply}");
    assert!(
        lines[1].contains("bad mode, penalty or cost argument"),
        "{reply}"
    );
    assert!(exists(&mut conn, &good).await);
    assert!(!exists(&mut conn, &bad).await);
}

/// Three rules on subject A and one on subject B (another slot of the same
/// node): two script calls in one round trip. After A's slot moves, the
/// old node's `MOVED` takes A's three checks together to the new node:
/// each counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slots_checks_are_one_call_and_move_together() {
    let cluster = ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("b");
    let backend = injected_cluster(&cluster, &prefix).await;
    let t = template().await;
    let rules = rules();
    let slot = |c: &Check| cluster::slot(key_of(&prefix, c).as_bytes());
    let on0: Vec<String> = (0..200)
        .map(|i| format!("198.51.100.{i}"))
        .filter(|ip| cluster.node_of_slot(slot(&check_of(&t, &rules[0], ip, 1, None))) == 0)
        .take(2)
        .collect();
    let mut checks: Vec<Check> = rules
        .iter()
        .map(|r| check_of(&t, r, &on0[0], 1, None))
        .collect();
    checks.push(check_of(&t, &rules[0], &on0[1], 1, None));
    assert!(checks[..3].iter().all(|c| slot(c) == slot(&checks[0])));
    assert_ne!(slot(&checks[0]), slot(&checks[3]));
    let urls = cluster.urls();
    let batch = Batch::new(T0, checks.clone());
    let ran0 = scripts_run(&urls).await;
    let out = backend.check(&batch).await;
    assert_eq!(remaining(&out), [Some(4); 4]);
    assert_eq!(scripts_run(&urls).await - ran0, 2, "one call per slot");

    let sa = slot(&checks[0]);
    tokio::task::block_in_place(|| cluster.migrate_slots(0, 1, sa..=sa, 1, Duration::ZERO))
        .expect("slot moved");
    let out = backend.check(&batch).await;
    assert_eq!(remaining(&out), [Some(3); 4]);
    assert_eq!(
        scripts_run(&urls).await - ran0,
        4,
        "A's call ran once, on its new node"
    );
}
