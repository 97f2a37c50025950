//! One primary of a 3-node Valkey Cluster killed under load: only its
//! keys fail, by their rules' fail modes.
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

use std::net::IpAddr;
use std::time::Duration;

use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::{HashKey, Outcome, RequestAttrs};
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_tests::support::fault_answers::*;
use ratelimit_tests::support::fault_calls::*;
use ratelimit_tests::support::faults::*;
use ratelimit_tests::support::load::{ask, Answer};
use ratelimit_tests::support::record::{Log, Sample};
use ratelimit_tests::support::{unique, wall_ms};
use ratelimit_valkey::{cluster, ValkeyBackend};

/// A 3-primary cluster, one primary killed under load: subjects on the
/// other nodes are still counted (shared by both instances) and limited;
/// subjects on the dead node follow their rule's fail_mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_one_primary_down_fails_only_its_keys() {
    let _turn = SERIAL.lock().await;
    let what = "cluster";
    let mut cluster = ValkeyServer::start_cluster(3).unwrap_or_else(|e| panic!("{e}"));
    let log = Log::new();
    let prefix = unique("cl");
    let mut limiters = Vec::new();
    for i in 0..INSTANCES {
        let backend = ValkeyBackend::builder(cluster.url(0))
            .cluster(true)
            .cluster_seeds(cluster.urls())
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("cluster backend");
        limiters.push(log.limiter(rules(), backend, i, INSTANCES as u64));
    }
    // Two subjects per node; `shared` and `open` share the key parts, so
    // one subject lives in one slot for both.
    let set = rules();
    let rule = set.get("shared").expect("rule");
    let mut by_node: Vec<Vec<IpAddr>> = vec![Vec::new(); 3];
    for k in 0..=255u8 {
        let who = IpAddr::from([198, 18, 7, k]);
        let KeyOutcome::Subject(d) =
            subject(rule, &RequestAttrs::new(who), &HashKey::DEFAULT, false)
        else {
            panic!("no subject");
        };
        // The slot of the subject's key, whatever the key format.
        let check = ratelimit_core::backend::Check::new(
            rule.clone(),
            ratelimit_core::backend::namespace(rule).into(),
            d,
            rule.quota(1),
            None,
            None,
        );
        let slot = cluster::slot(ratelimit_valkey::key_of("rl:", &check).as_bytes());
        let node = cluster.node_of_slot(slot);
        if by_node[node].len() < 2 {
            by_node[node].push(who);
        }
    }
    assert!(by_node.iter().all(|v| v.len() == 2), "{by_node:?}");
    // Connect every instance to every node before the fault.
    for (i, l) in limiters.iter().enumerate() {
        for who in by_node.iter().flatten() {
            assert_eq!(ask(l, i, "/open", *who).await.outcome, Outcome::Forward);
        }
    }
    let t_kill = wall_ms();
    cluster.kill(1);
    tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
    // Every instance, concurrently, sends 6 `shared` (limit 6 per hour,
    // fail_mode closed) and 6 `open` checks for every subject.
    let mut tasks = tokio::task::JoinSet::new();
    for (i, l) in limiters.iter().enumerate() {
        for who in by_node.iter().flatten().copied() {
            let l = l.clone();
            tasks.spawn(async move {
                let mut out = Vec::new();
                for _ in 0..6 {
                    out.push(ask(&l, i, "/shared", who).await);
                    out.push(ask(&l, i, "/open", who).await);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                out
            });
        }
    }
    let mut answers = Vec::new();
    while let Some(r) = tasks.join_next().await {
        answers.extend(r.expect("a client task panicked"));
    }
    let lat = assert_latency(what, &answers);
    let mut lines = Vec::new();
    for (node, subjects) in by_node.iter().enumerate() {
        for who in subjects {
            let of = |path: &str| -> Vec<&Answer> {
                answers
                    .iter()
                    .filter(|a| a.ip == *who && a.path == path)
                    .collect()
            };
            let count = |v: &[&Answer], o: Outcome| v.iter().filter(|a| a.outcome == o).count();
            let shared = of("/shared");
            let open = of("/open");
            assert_eq!(
                count(&open, Outcome::Forward),
                12,
                "{what}: open on node {node}"
            );
            if node == 1 {
                assert_eq!(
                    count(&shared, Outcome::Unavailable),
                    12,
                    "{what}: {who} lives on the dead node: fail_mode closed"
                );
                assert!(shared.iter().all(|a| a.retry_after == Some(1)));
            } else {
                assert_eq!(
                    (
                        count(&shared, Outcome::Forward),
                        count(&shared, Outcome::Limited)
                    ),
                    (6, 6),
                    "{what}: {who} on live node {node}: counted over both instances, limit 6"
                );
            }
            lines.push(format!(
                "node {node} {who}: shared {} x 200 / {} x 429 / {} x 503",
                count(&shared, Outcome::Forward),
                count(&shared, Outcome::Limited),
                count(&shared, Outcome::Unavailable)
            ));
        }
    }
    let samples = log.samples();
    let after: Vec<Sample> = samples
        .iter()
        .filter(|s| s.sent_ms >= t_kill)
        .cloned()
        .collect();
    eprintln!(
        "fault {what}: node 1 of 3 killed; {} answers, max {} ms (p99 {} ms); {}; {}",
        answers.len(),
        lat.max(),
        lat.quantile(0.99),
        lines.join("; "),
        kinds(&after)
    );
}
