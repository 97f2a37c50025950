//! Publishing across three instances: racing publishes, the schema hold,
//! the history, the registry and the shared CSRF secret.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, fleet, wait_until};
use ratelimit_core::control::FleetSize;
use ratelimit_core::control::{Control, ControlError, SCHEMA};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_racing_publishes_one_wins_and_the_other_is_told_where_to_start() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    for round in 0..20u64 {
        let (a, b) = (&fleet[0].control, &fleet[1].control);
        let set_a = api_set(10 + round, "log");
        let set_b = api_set(500 + round, "log");
        let (ra, rb) = tokio::join!(
            a.publish(round, &set_a, "alice", BTreeMap::new()),
            b.publish(round, &set_b, "bob", BTreeMap::new()),
        );
        let won = match (&ra, &rb) {
            (Ok(v), Err(ControlError::Conflict { current })) if *v == round + 1 => {
                assert_eq!(*current, round + 1);
                "alice"
            }
            (Err(ControlError::Conflict { current }), Ok(v)) if *v == round + 1 => {
                assert_eq!(*current, round + 1);
                "bob"
            }
            other => panic!("round {round}: {other:?}"),
        };
        let current = a.current().await.unwrap().expect("published");
        assert_eq!((current.version, current.note.as_str()), (round + 1, won));
    }
    let history = fleet[2].control.history(100).await.unwrap();
    assert_eq!(history.len(), 20, "the last 20 versions are kept");
    assert_eq!(history[0].version, 20);
    wait_until(
        "every instance runs version 20",
        Duration::from_secs(2),
        || fleet.iter().all(|n| n.follower.running_version() == 20),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_is_held_while_a_live_instance_reads_an_older_schema() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    wait_until(
        "three instances in the registry",
        Duration::from_secs(3),
        || {
            fleet
                .iter()
                .all(|n| n.follower.fleet_size().fleet_size() == 3)
        },
    )
    .await;
    // An older build's report, as it would write it.
    let old = format!(
        r#"{{"id": "edge-old", "running_version": 0, "schema": {}, "last_report_ms": 1,
            "refused": null, "rules": [], "top": []}}"#,
        SCHEMA - 1
    );
    let mut conn = connect(server.url()).await;
    let instances = format!("{prefix}control{{ctl}}:instances");
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}control{{ctl}}:instance:edge-old"))
        .arg(&old)
        .arg("PX")
        .arg(60_000)
        .query_async(&mut conn)
        .await
        .unwrap();
    let (t, _): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await.unwrap();
    let _: () = redis::cmd("ZADD")
        .arg(&instances)
        .arg(t * 1000)
        .arg("edge-old")
        .query_async(&mut conn)
        .await
        .unwrap();
    let err = operator
        .publish(0, &api_set(5, "log"), "held", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ControlError::Held {
            needs_schema: SCHEMA,
            instances: vec![("edge-old".into(), SCHEMA - 1)],
        }
    );
    assert!(err.to_string().contains("edge-old"), "{err}");
    assert_eq!(operator.current().await.unwrap(), None, "nothing published");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_shows_every_instance_and_the_fleet_shares_one_csrf_secret() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let v = fleet[0]
        .control
        .publish(0, &api_set(5, "log"), "five", BTreeMap::new())
        .await
        .unwrap();
    wait_until("all report version 1", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.follower.running_version() == v)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let view = fleet[1].control.fleet().await.unwrap();
    let ids: Vec<&str> = view.instances.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert!(view.lagging(v).is_empty(), "{view:?}");
    assert_eq!(view.fleet_size(), 3);
    assert_eq!(
        view.published.as_ref().map(|p| p.note.as_str()),
        Some("five")
    );
    let totals = view.rule_totals();
    assert_eq!(totals.len(), 1);
    assert_eq!(totals[0].rule, "api");

    let secrets = [
        fleet[0].control.csrf_secret().await.unwrap(),
        fleet[1].control.csrf_secret().await.unwrap(),
        fleet[2].control.csrf_secret().await.unwrap(),
    ];
    assert!(secrets.iter().all(|s| *s == secrets[0]) && secrets[0] != [0; 32]);
}
