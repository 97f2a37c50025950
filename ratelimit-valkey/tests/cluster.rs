//! A local 3-primary cluster: correct decisions across slots, one round
//! trip per node, one killed node affects only its own keys, and a check
//! redirected with MOVED or ASK is sent once more and counted once.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::backend::{Backend, Batch, Check};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{
    connect, errors, injected_cluster, scripts_run, spawned, ValkeyServer,
};
use ratelimit_valkey::cluster;

/// Subjects until every node has `per_node` of them.
fn spread(template: &Check, prefix: &str, nodes: impl Fn(u16) -> usize) -> Vec<(Check, usize)> {
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(3, Duration::from_secs(60))
        .build()
        .expect("rule");
    let mut out = Vec::new();
    let mut counts = [0usize; 3];
    for i in 0..200u32 {
        let c = check_of(template, &rule, &format!("198.51.100.{i}"), 1, None);
        let key = ratelimit_valkey::key_of(prefix, &c);
        let node = nodes(cluster::slot(key.as_bytes()));
        if counts[node] < 2 {
            counts[node] += 1;
            out.push((c, node));
        }
    }
    assert_eq!(counts, [2, 2, 2]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_across_nodes_and_a_killed_node_fails_only_its_keys() {
    let mut cluster = ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("c");
    let backend = injected_cluster(&cluster, &prefix).await;
    let t = template().await;
    let checks = spread(&t, &prefix, |s| cluster.node_of_slot(s));
    let batch = Batch::new(T0, checks.iter().map(|(c, _)| c.clone()).collect());
    for round in 0..4u64 {
        let out = backend.check(&batch).await;
        for r in &out {
            let d = r.as_ref().expect("answered");
            assert_eq!(d.allowed, round < 3, "round {round}");
            assert_eq!(d.remaining, 2u64.saturating_sub(round));
        }
    }

    cluster.kill(1);
    let later = Batch::new(T0 + 60_000, batch.checks.clone());
    let out = backend.check(&later).await;
    for ((_, node), r) in checks.iter().zip(&out) {
        if *node == 1 {
            assert!(r.is_err(), "keys of the killed node fail: {r:?}");
        } else {
            let d = r.as_ref().expect("other nodes still answer");
            assert!(d.allowed);
        }
    }
}

/// A slot moved while the backend's map still names its old node: the old
/// node answers MOVED and the check goes to the new one. A slot moving:
/// the old node answers ASK for a key already moved, and the check goes
/// to the new one after ASKING. Each check is answered, and each runs
/// exactly once in the whole cluster (fails without the redirect: the
/// checks come back as `Protocol` errors).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moved_and_ask_are_followed_once_and_counted_once() {
    let cluster = Arc::new(ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}")));
    let prefix = unique("r");
    let backend = injected_cluster(&cluster, &prefix).await;
    let t = template().await;
    let on0: Vec<Check> = spread(&t, &prefix, |s| cluster.node_of_slot(s))
        .into_iter()
        .filter(|(_, node)| *node == 0)
        .map(|(c, _)| c)
        .collect();
    let slot = |c: &Check| cluster::slot(ratelimit_valkey::key_of(&prefix, c).as_bytes());
    let (a, b) = (on0[0].clone(), on0[1].clone());
    assert_ne!(slot(&a), slot(&b));
    let urls = cluster.urls();
    let ran0 = scripts_run(&urls).await;
    let remaining = |out: Vec<
        Result<ratelimit_core::algorithm::Decision, ratelimit_core::backend::BackendError>,
    >|
     -> Vec<u64> {
        out.into_iter()
            .map(|r| r.expect("answered").remaining)
            .collect()
    };
    let both = Batch::new(T0, vec![a.clone(), b.clone()]);
    assert_eq!(remaining(backend.check(&both).await), vec![2, 2]);

    // MOVED: a's slot now lives on node 1; the map is read every 5 s.
    let sa = slot(&a);
    tokio::task::block_in_place(|| cluster.migrate_slots(0, 1, sa..=sa, 1, Duration::ZERO))
        .expect("slot moved");
    let only_a = Batch::new(T0, vec![a.clone()]);
    assert_eq!(remaining(backend.check(&only_a).await), vec![1]);
    assert_eq!(errors(&urls[0], "MOVED").await, 1);

    // ASK: b's key moves first, the slot is handed over 1.5 s later.
    let sb = slot(&b);
    let c = cluster.clone();
    let moving = tokio::task::spawn_blocking(move || {
        c.migrate_slots(0, 1, sb..=sb, 1, Duration::from_millis(1500))
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let only_b = Batch::new(T0, vec![b.clone()]);
    assert_eq!(remaining(backend.check(&only_b).await), vec![1]);
    assert_eq!(errors(&urls[0], "ASK").await, 1);
    let m = moving.await.expect("joined").expect("slot moved");
    assert_eq!((m.slots, m.keys), (1, 1));
    // Handed over: MOVED (or the map already read), then node 1 answers.
    assert_eq!(remaining(backend.check(&both).await), vec![0, 0]);
    let ran = scripts_run(&urls).await - ran0;
    assert_eq!(ran, 6, "6 checks, each run once in the cluster");
}

/// MIGRATE (resharding) keeps a key's time to live, not its expiry: the
/// key arrives on its new node with an expiry a few ms later. The windows,
/// which tell their window by the key's expiry, keep its count (with the
/// expiry taken exactly, the count was lost and the limit admitted again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_key_moved_with_a_later_expiry_keeps_its_count() {
    let server = spawned();
    let prefix = unique("drift");
    let backend = ratelimit_testkit::valkey::injected_with_prefix(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let rules = [
        RuleBuilder::new("fw")
            .key(["ip"])
            .fixed_window(3, Duration::from_secs(60))
            .build()
            .expect("rule"),
        RuleBuilder::new("sw")
            .key(["ip"])
            .sliding_window(3, Duration::from_secs(60))
            .build()
            .expect("rule"),
    ];
    for rule in &rules {
        for drift in [1i64, 7, -1] {
            let c = check_of(&t, rule, &format!("192.0.2.{}", drift + 10), 1, None);
            let batch = Batch::new(T0 + 1000, vec![c.clone()]);
            let first = backend.check(&batch).await.remove(0).expect("answered");
            assert_eq!(first.remaining, 2, "{}", rule.id);
            let key = ratelimit_valkey::key_of(&prefix, &c);
            let at: i64 = redis::cmd("PEXPIRETIME")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .expect("PEXPIRETIME");
            let _: i64 = redis::cmd("PEXPIREAT")
                .arg(&key)
                .arg(at + drift)
                .query_async(&mut conn)
                .await
                .expect("PEXPIREAT");
            let second = backend.check(&batch).await.remove(0).expect("answered");
            assert_eq!(
                second.remaining, 1,
                "{}: the count survives an expiry moved by {drift} ms",
                rule.id
            );
        }
    }
}
