//! An instance of an older build in the fleet: it refuses a set that needs
//! a newer schema (the others load it), reports why, and holds the next
//! publish, named, until it is upgraded or gone.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, fleet, instance_reading, wait_until};
use ratelimit_core::control::{Control, ControlError, Published};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_refused_by_one_older_instance_is_reported_and_holds_the_next_publish() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    let v1 = operator
        .publish(0, &api_set(9, "log"), "needs this build", BTreeMap::new())
        .await
        .unwrap();
    // An older build joins after the publish (too late to hold it).
    let old = instance_reading(
        server.url(),
        &prefix,
        "old",
        &api_set(3, "log"),
        Published::SCHEMA - 1,
    )
    .await;
    wait_until(
        "the old instance refuses, the others run it",
        Duration::from_secs(3),
        || {
            old.follower.refused().is_some()
                && fleet.iter().all(|n| n.follower.running_version() == v1)
        },
    )
    .await;
    let (v, why) = old.follower.refused().unwrap();
    assert_eq!(v, v1);
    assert!(
        why.contains(&format!(
            "needs schema {}; this build reads schema {}",
            Published::SCHEMA,
            Published::SCHEMA - 1
        )),
        "{why}"
    );
    assert_eq!(old.follower.running_version(), 0);
    assert_eq!(
        old.limiter.rules().get("api").map(|r| r.limit),
        Some(3),
        "keeps its set"
    );

    tokio::time::sleep(Duration::from_millis(400)).await;
    let view = operator.fleet().await.unwrap();
    let refusing: Vec<&str> = view.refusing(v1).iter().map(|(id, _)| *id).collect();
    assert_eq!(refusing, ["old"]);
    let lagging: Vec<&str> = view.lagging(v1).iter().map(|r| r.id.as_str()).collect();
    assert_eq!(lagging, ["old"]);

    let held = operator
        .publish(v1, &api_set(10, "log"), "held", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(
        held,
        ControlError::Held {
            needs_schema: Published::SCHEMA,
            instances: vec![("old".into(), Published::SCHEMA - 1)],
        }
    );

    // Gone (stopped, and its entry removed rather than waiting a minute).
    drop(old);
    let mut conn = connect(server.url()).await;
    let _: u64 = redis::cmd("ZREM")
        .arg(format!("{prefix}control{{ctl}}:instances"))
        .arg("old")
        .query_async(&mut conn)
        .await
        .unwrap();
    let v2 = operator
        .publish(
            v1,
            &api_set(10, "log"),
            "after the upgrade",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    wait_until("the fleet runs v2", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.running_version() == v2)
    })
    .await;
}
