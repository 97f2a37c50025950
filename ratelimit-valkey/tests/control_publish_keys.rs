//! A publish is all or nothing (issue 39, finding 1): each control key the
//! publish script touches, planted with another type, fails the publish
//! with an error naming the key and what it should hold, and nothing
//! changes: not in Valkey, not on any instance. A registry of another type
//! (finding 4) is named, and the publish still goes through.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, instance, wait_until, Instance};
use ratelimit_core::control::{Control, ControlError};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use redis::aio::MultiplexedConnection;

/// Two instances running version 1 (`api` limit 5).
async fn two_at_version_1(url: &str, prefix: &str) -> Vec<Instance> {
    let fleet = vec![
        instance(url, prefix, "a", "[]").await,
        instance(url, prefix, "b", "[]").await,
    ];
    let v = fleet[0]
        .control
        .publish(0, &api_set(5, "block"), "first", BTreeMap::new())
        .await
        .expect("the first publish");
    assert_eq!(v, 1);
    wait_until("version 1 everywhere", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.follower.running_version() == 1)
    })
    .await;
    fleet
}

/// Replaces `key` with the string `planted`.
async fn plant_string(conn: &mut MultiplexedConnection, key: &str) {
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg(key)
        .ignore()
        .cmd("SET")
        .arg(key)
        .arg("planted")
        .ignore()
        .query_async(conn)
        .await
        .unwrap();
}

/// Plants a string at the control key `name`, publishes, and checks the
/// publish fails naming the key and `kind`, and changed nothing.
async fn publish_over_a_string_at(name: &str, kind: &str) {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("keys");
    let fleet = two_at_version_1(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let key = format!("{prefix}control{{ctl}}:{name}");
    let history = format!("{prefix}control{{ctl}}:history");
    let set = format!("{prefix}control{{ctl}}:set");
    let history_before: Option<Vec<String>> = if name == "history" {
        None
    } else {
        Some(
            redis::cmd("LRANGE")
                .arg(&history)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .unwrap(),
        )
    };
    plant_string(&mut conn, &key).await;

    let err = fleet[0]
        .control
        .publish(1, &api_set(6, "block"), "second", BTreeMap::new())
        .await
        .expect_err("a publish over a key of another type fails");
    let ControlError::Invalid(why) = &err else {
        panic!("{err:?}")
    };
    let says = format!("the control key {key} holds a string where it should hold a {kind}");
    assert!(why.contains(&says), "{why}");
    assert!(why.contains("nothing was published"), "{why}");

    // Nothing changed in Valkey.
    let planted: String = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(planted, "planted");
    if let Some(before) = history_before {
        let after: Vec<String> = redis::cmd("LRANGE")
            .arg(&history)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(after, before, "the history is unchanged");
    }
    if name != "set" {
        let v: Option<String> = redis::cmd("HGET")
            .arg(&set)
            .arg("version")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(
            v.as_deref(),
            Some("1"),
            "the published version is unchanged"
        );
    }
    // Nor on the fleet, after several polls (200 ms) and notices.
    tokio::time::sleep(Duration::from_millis(700)).await;
    for n in &fleet {
        assert_eq!(n.follower.running_version(), 1, "{} runs version 1", n.id);
        assert_eq!(
            n.limiter.rules().get("api").map(|r| r.limit),
            Some(5),
            "{}",
            n.id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_of_another_type_fails_the_publish_and_changes_nothing() {
    publish_over_a_string_at("history", "list").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_of_another_type_fails_the_publish_and_changes_nothing() {
    publish_over_a_string_at("set", "hash").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_of_another_type_is_named_and_the_publish_goes_through() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("keys");
    let fleet = two_at_version_1(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let key = format!("{prefix}control{{ctl}}:instances");
    plant_string(&mut conn, &key).await;

    let err = fleet[0]
        .control
        .fleet()
        .await
        .expect_err("the registry cannot be read");
    let says = format!("the control key {key} holds a string where it should hold a zset");
    assert!(
        matches!(&err, ControlError::Invalid(why) if why.contains(&says)),
        "{err:?}"
    );

    let v = fleet[0]
        .control
        .publish(1, &api_set(6, "block"), "second", BTreeMap::new())
        .await
        .expect("the publish goes through");
    assert_eq!(v, 2);
    wait_until("version 2 everywhere", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.follower.running_version() == 2)
    })
    .await;
    // Deleted, the registry is written again by the instances' reports.
    let _: () = redis::cmd("DEL")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    let control = &fleet[0].control;
    let mut seen = 0;
    for _ in 0..100 {
        seen = control.fleet().await.map_or(0, |v| v.instances.len());
        if seen == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen, 2, "both instances reported again");
}
