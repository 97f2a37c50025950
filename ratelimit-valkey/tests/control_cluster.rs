//! The control on a Valkey Cluster: it finds the node serving its keys'
//! slot from any seed (following `MOVED`), and after that node dies and its
//! replica is promoted, publishes and switches reach the whole fleet again
//! without a restart. While its slot moves to another node (a resharding),
//! no call fails: `ASK` is followed and `TRYAGAIN` waited out.

mod control_common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use control_common::{api_set, wait_until};
use ratelimit_core::control::{Control, Switch};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::KeyDigest;
use ratelimit_core::Limiter;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, errors, ValkeyCluster};
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

/// Waits `within` for every instance to run version 2 with JWTs disabled.
async fn version_2_and_the_switch(fleet: &[Instance], within: Duration) {
    wait_until("version 2 and the switch everywhere", within, || {
        fleet
            .iter()
            .all(|n| n.follower.running_version() == 2 && n.limiter.switches().jwt_disabled())
    })
    .await;
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
    version_2_and_the_switch(&fleet, Duration::from_secs(5)).await;
    for n in &fleet {
        assert_eq!(n.limiter.rules().get("api").map(|r| r.limit), Some(9));
        assert!(n.control.current().await.expect("current").is_some());
    }
}

/// Waits until node `url` holds no key of `slot`: a migration of it has
/// moved them all.
async fn emptied(url: &str, slot: u16) {
    let mut conn = connect(url).await;
    let start = Instant::now();
    loop {
        let n: u64 = redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query_async(&mut conn)
            .await
            .expect("COUNTKEYSINSLOT");
        if n == 0 {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "{n} keys left");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The control's slot moves to another node while the fleet runs. Once its
/// keys have moved, the old node answers `ASK`: a publish, a switch and
/// the followers' reads reach the new node after `ASKING`, before the slot
/// is handed over. Moved back, a lift, whose keys exist on neither node,
/// is answered `MOVED` (the slot was handed over), then `ASK`, then
/// `TRYAGAIN` by the importing node, and is sent again until the handover.
/// Without the `ASK` path the publish fails with the `ASK`; without the
/// wait, the lift with the `TRYAGAIN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_call_fails_while_the_control_slot_moves() {
    let c = Arc::new(ValkeyCluster::start(3).unwrap_or_else(|e| panic!("{e}")));
    let s = slot(b"{ctl}");
    let a = c.node_of_slot(s);
    let b = (a + 1) % c.primaries();
    let prefix = unique("ctl");
    let fleet: Vec<Instance> = ["a", "b"]
        .iter()
        .map(|id| instance(&c.urls(), &prefix, id))
        .collect();
    let operator = &fleet[0].control;
    operator
        .publish(0, &api_set(7, "block"), "before", BTreeMap::new())
        .await
        .expect("publish");
    wait_until("version 1 everywhere", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.follower.running_version() == 1)
    })
    .await;

    // To b: the keys move, then 4 s before the slot is handed over.
    let (ask0, mover) = (errors(&c.url(a), "ASK").await, c.clone());
    let moving = tokio::task::spawn_blocking(move || {
        mover.migrate_slots(a, b, s..=s, 1, Duration::from_secs(4))
    });
    emptied(&c.url(a), s).await;
    operator
        .publish(1, &api_set(9, "block"), "while it moves", BTreeMap::new())
        .await
        .expect("a publish while the slot moves");
    operator
        .set_switch(Switch::DisableJwt, true)
        .await
        .expect("a switch while the slot moves");
    version_2_and_the_switch(&fleet, Duration::from_secs(2)).await;
    assert!(
        !moving.is_finished(),
        "handed over before the fleet applied"
    );
    assert!(errors(&c.url(a), "ASK").await > ask0, "a answered ASK");
    let m = moving.await.expect("joined").expect("moved to b");
    assert!(m.slots == 1 && m.keys >= 3, "{m:?}");

    // Back to a, with 500 ms between the keys' move and the handover.
    let (again0, mover) = (errors(&c.url(a), "TRYAGAIN").await, c.clone());
    let back = tokio::task::spawn_blocking(move || {
        mover.migrate_slots(b, a, s..=s, 1, Duration::from_millis(500))
    });
    emptied(&c.url(b), s).await;
    operator
        .lift("api", KeyDigest([7; 16]))
        .await
        .expect("a lift while the slot moves");
    assert!(
        errors(&c.url(a), "TRYAGAIN").await > again0,
        "a, importing, answered TRYAGAIN"
    );
    back.await.expect("joined").expect("moved back to a");
    let seq: Option<u64> = redis::cmd("GET")
        .arg(format!("{prefix}control{{ctl}}:lift_seq"))
        .query_async(&mut connect(&c.url(a)).await)
        .await
        .expect("GET lift_seq on a");
    assert_eq!(seq, Some(1), "the lift was recorded once");
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
