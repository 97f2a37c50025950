//! The control on a Valkey Cluster: it finds the node serving its keys'
//! slot from any seed (following `MOVED`), and after that node dies and its
//! replica is promoted, publishes and switches reach the whole fleet again
//! without a restart.

mod control_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use control_common::{api_set, wait_until};
use ratelimit_core::control::{Control, Switch};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::ValkeyCluster;
use ratelimit_valkey::cluster::slot;
use ratelimit_valkey::control::{FollowConfig, Follower, ValkeyControl};

/// One instance: an in-memory limiter following the fleet's control.
struct Instance {
    limiter: Limiter,
    control: ValkeyControl,
    follower: Follower,
}

fn instance(seeds: &[String], prefix: &str, id: &str) -> Instance {
    let limiter = Limiter::builder(RuleSet::from_json("[]").expect("empty set")).build();
    let control = ValkeyControl::open_cluster(seeds, prefix)
        .expect("control")
        .with_limiter(limiter.clone());
    let config = FollowConfig::new(id)
        .poll(Duration::from_millis(200))
        .report_every(Duration::from_millis(300));
    let follower = control.follow(limiter.clone(), config);
    Instance {
        limiter,
        control,
        follower,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_finds_its_node_and_follows_it_across_a_failover() {
    let mut c = ValkeyCluster::start_with(3, 1, Duration::from_millis(1000))
        .unwrap_or_else(|e| panic!("{e}"));
    let owner = c.node_of_slot(slot(b"{ctl}"));
    let replica = c.replica_of(owner).expect("the primary has a replica");
    // The seeds start with a primary that does not serve the control's
    // slot: every call must follow its `MOVED` to reach the keys.
    let mut seeds: Vec<String> = (0..c.primaries())
        .filter(|&i| i != owner)
        .map(|i| c.url(i))
        .collect();
    seeds.extend([c.url(owner), c.url(replica)]);
    let prefix = unique("ctl");
    let fleet: Vec<Instance> = ["a", "b"]
        .iter()
        .map(|id| instance(&seeds, &prefix, id))
        .collect();
    let operator = &fleet[0].control;
    let v = operator
        .publish(0, &api_set(7, "block"), "on the cluster", BTreeMap::new())
        .await
        .expect("a publish through a seed that answers MOVED");
    assert_eq!(v, 1);
    wait_until("version 1 everywhere", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.follower.running_version() == 1)
    })
    .await;

    c.kill(owner);
    tokio::task::block_in_place(|| c.wait_promoted(replica, Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("{e}"));
    // The control's node is gone: the next calls start again from the
    // seeds, whose `MOVED` names the promoted replica.
    let start = Instant::now();
    let mut failures = Vec::new();
    let v = loop {
        match operator
            .publish(
                1,
                &api_set(9, "block"),
                "after the failover",
                BTreeMap::new(),
            )
            .await
        {
            Ok(v) => break v,
            Err(e) => failures.push(e.to_string()),
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no publish within 5 s of the promotion: {} failures, the last {:?}",
            failures.len(),
            failures.last()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(v, 2);
    // A node may still say the cluster is down for a moment after the
    // promotion is visible everywhere; any other failure after the first
    // (the call that found its node dead) means a call did not move on.
    let moved_on = failures
        .iter()
        .skip(1)
        .all(|f| f.to_ascii_lowercase().contains("clusterdown"));
    assert!(
        moved_on,
        "more than the call that found its node dead failed: {failures:?}"
    );
    operator
        .set_switch(Switch::DisableJwt, true)
        .await
        .expect("a switch on the promoted replica");
    wait_until(
        "version 2 and the switch everywhere",
        Duration::from_secs(5),
        || {
            fleet
                .iter()
                .all(|n| n.follower.running_version() == 2 && n.limiter.switches().jwt_disabled())
        },
    )
    .await;
    for n in &fleet {
        assert_eq!(n.limiter.rules().get("api").map(|r| r.limit), Some(9));
        assert!(n.control.current().await.expect("current").is_some());
    }
}

#[test]
fn open_cluster_needs_a_seed_and_valid_urls() {
    let none: [&str; 0] = [];
    let e = ValkeyControl::open_cluster(none, "rl:").unwrap_err();
    assert!(e.to_string().contains("no seed node"), "{e}");
    let e = ValkeyControl::open_cluster(["valkey://127.0.0.1:1", "http://x"], "rl:").unwrap_err();
    assert!(e.to_string().contains("http://x"), "{e}");
}

#[test]
fn the_control_never_prints_its_password() {
    let control = ValkeyControl::open_cluster(["valkey://ops:s3cret@127.0.0.1:1"], "rl:").unwrap();
    let printed = format!("{control:?}");
    assert!(!printed.contains("s3cret"), "{printed}");
}
