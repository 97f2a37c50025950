//! Bad input in Valkey: sets written by hand that are malformed, oversized,
//! from a future schema or with a version that is not a number, and a
//! flood of pub/sub notices. Each instance refuses with a clear reason,
//! keeps running what it has, and reports it.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, instance, wait_until, Instance};
use ratelimit_core::control::{Control, ControlError, Published};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use redis::aio::MultiplexedConnection;

async fn write_set(conn: &mut MultiplexedConnection, prefix: &str, fields: &[(&str, &str)]) {
    let mut cmd = redis::cmd("HSET");
    cmd.arg(format!("{prefix}control{{ctl}}:set"));
    for (k, v) in fields {
        cmd.arg(*k).arg(*v);
    }
    let _: () = cmd.query_async(conn).await.unwrap();
    let _: () = redis::cmd("PUBLISH")
        .arg(format!("{prefix}control{{ctl}}:notice"))
        .arg("by hand")
        .query_async(conn)
        .await
        .unwrap();
}

async fn three(url: &str, prefix: &str) -> Vec<Instance> {
    let mut v = Vec::new();
    for id in ["a", "b", "c"] {
        v.push(instance(url, prefix, id, &api_set(3, "log")).await);
    }
    v
}

async fn refused_by_all(fleet: &[Instance], version: u64, says: &str) {
    wait_until(says, Duration::from_secs(3), || {
        fleet.iter().all(|n| {
            n.follower
                .refused()
                .is_some_and(|(v, why)| v == version && why.contains(says))
        })
    })
    .await;
    for n in fleet {
        assert_eq!(n.follower.running_version(), 0, "{}", n.id);
        assert_eq!(
            n.limiter.rules().get("api").map(|r| r.limit),
            Some(3),
            "{} keeps its set",
            n.id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_written_by_hand_are_refused_with_a_reason_and_reported() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = three(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let fields = |v: &'static str, schema: &'static str, json: &'static str| {
        [
            ("version", v),
            ("schema", schema),
            ("json", json),
            ("epoch", "hand"),
        ]
    };

    write_set(&mut conn, &prefix, &fields("1", "1", "{not json")).await;
    refused_by_all(&fleet, 1, "invalid JSON").await;

    let big = format!("[{}]", " ".repeat(Published::MAX_SET_BYTES));
    let big: &'static str = Box::leak(big.into_boxed_str());
    write_set(&mut conn, &prefix, &fields("2", "1", big)).await;
    refused_by_all(&fleet, 2, "over the limit").await;

    write_set(&mut conn, &prefix, &fields("3", "99", "[]")).await;
    refused_by_all(&fleet, 3, "needs schema 99").await;

    let bad_rule = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 0, "period": "1m", "key": ["ip"]}]"#;
    write_set(&mut conn, &prefix, &fields("4", "1", bad_rule)).await;
    refused_by_all(&fleet, 4, "field \"limit\"").await;

    // The registry tells the operator who refused what.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let view = fleet[0].control.fleet().await.unwrap();
    let refusing: Vec<&str> = view.refusing(4).iter().map(|(id, _)| *id).collect();
    assert_eq!(refusing, ["a", "b", "c"]);
    assert_eq!(view.lagging(4).len(), 3);

    // A version from the future: beyond what the publish script counts.
    write_set(
        &mut conn,
        &prefix,
        &fields("18446744073709551615", "1", "[]"),
    )
    .await;
    refused_by_all(&fleet, 0, "below 2^53: \"18446744073709551615\"").await;
    write_set(&mut conn, &prefix, &[("version", "soon")]).await;
    refused_by_all(&fleet, 0, "below 2^53: \"soon\"").await;
    let err = fleet[0]
        .control
        .publish(4, "[]", "", BTreeMap::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ControlError::Invalid(why) if why.contains("not a number")),
        "{err:?}"
    );

    // Fixed by hand, then published again: every instance converges.
    write_set(&mut conn, &prefix, &fields("5", "1", "[]")).await;
    let v = fleet[0]
        .control
        .publish(5, &api_set(8, "log"), "fixed", BTreeMap::new())
        .await
        .unwrap();
    wait_until(
        "converged after the bad sets",
        Duration::from_secs(3),
        || {
            fleet
                .iter()
                .all(|n| n.follower.running_version() == v && n.follower.refused().is_none())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notices_is_coalesced_and_their_bodies_ignored() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = three(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    wait_until("subscribed", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.reads() > 0)
    })
    .await;
    let reads_before: u64 = fleet.iter().map(|n| n.follower.reads()).sum();
    let channel = format!("{prefix}control{{ctl}}:notice");
    let mut pipe = redis::pipe();
    for i in 0..20_000u32 {
        // Bodies that would mean something if they were read.
        pipe.cmd("PUBLISH")
            .arg(&channel)
            .arg(format!("{} version {i}", "\u{0}".repeat(i as usize % 7)));
    }
    let _: Vec<u64> = pipe.query_async(&mut conn).await.unwrap();
    wait_until("the notices arrive", Duration::from_secs(10), || {
        fleet.iter().all(|n| n.follower.notices() >= 20_000)
    })
    .await;
    let reads: u64 = fleet.iter().map(|n| n.follower.reads()).sum::<u64>() - reads_before;
    assert!(reads < 3 * 2_000, "{reads} reads for 60,000 notices");
    for n in &fleet {
        assert_eq!(n.follower.running_version(), 0);
        assert_eq!(n.follower.refused(), None);
    }
    // Still following.
    let v = fleet[0]
        .control
        .publish(0, &api_set(4, "log"), "after the flood", BTreeMap::new())
        .await
        .unwrap();
    wait_until("a publish after the flood", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.running_version() == v)
    })
    .await;
}
