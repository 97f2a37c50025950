//! A local 3-primary cluster: correct decisions across slots, one round
//! trip per node, and one killed node affects only its own keys.

use std::time::Duration;

use ratelimit_core::backend::{Backend, Batch, Check};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::{cluster, ValkeyBackend};

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
    let backend = ValkeyBackend::builder(cluster.url(0))
        .cluster(true)
        .cluster_seeds(cluster.urls())
        .key_prefix(&prefix)
        .injected_time(true)
        .deadline(Duration::from_millis(300))
        .build()
        .await
        .expect("cluster backend");
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
