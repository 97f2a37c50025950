//! A control key of the wrong type costs only its own part of the control
//! state (issue 39, finding 2): with a list at `lift_seq`, a string at
//! `set`, a string at `lifts`, a hash at `temporary` or a list at its
//! stamp, a kill switch
//! still reaches 3 of 3 instances; each instance names the key and what it
//! should hold (in its log, once, and in its report); `fleet()` shows the
//! instances that have not applied a switch or a lift.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, instance, wait_until, Instance};
use ratelimit_core::control::{Control, ControlError, Switch};
use ratelimit_core::KeyDigest;
use ratelimit_testkit::log_capture::LogCapture;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use redis::aio::MultiplexedConnection;
use tracing::Level;

async fn three(url: &str, prefix: &str) -> Vec<Instance> {
    let mut v = Vec::new();
    for id in ["a", "b", "c"] {
        v.push(instance(url, prefix, id, &api_set(3, "log")).await);
    }
    v
}

/// Replaces `key` with a value of another type, by hand.
async fn plant(conn: &mut MultiplexedConnection, key: &str, kind: &str) {
    let _: () = redis::cmd("DEL").arg(key).query_async(conn).await.unwrap();
    let mut cmd = match kind {
        "list" => redis::cmd("RPUSH"),
        "string" => redis::cmd("SET"),
        "hash" => redis::cmd("HSET"),
        other => panic!("{other}"),
    };
    if kind == "hash" {
        cmd.arg(key).arg("field").arg("x");
    } else {
        cmd.arg(key).arg("x");
    }
    let _: () = cmd.query_async(conn).await.unwrap();
}

async fn kill_switch_reaches_all(fleet: &[Instance], on: bool) {
    fleet[0]
        .control
        .set_switch(Switch::DisableRateLimiting, on)
        .await
        .expect("the switch is stored");
    wait_until("the kill switch on 3 of 3", Duration::from_secs(3), || {
        fleet
            .iter()
            .all(|n| n.limiter.switches().rate_limiting_disabled() == on)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_typed_key_costs_only_its_part_and_switches_reach_every_instance() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = three(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let key = |name: &str| format!("{prefix}control{{ctl}}:{name}");
    let mut on = true;
    for (name, kind, should) in [
        ("lift_seq", "list", "the last lift's number"),
        ("set", "string", "the published set, a hash"),
        ("lifts", "string", "the lifts, a list"),
        (
            "temporary",
            "hash",
            "the rules added at run time, a string of JSON",
        ),
        ("temporary_stamp", "list", "the stamp of the last change"),
    ] {
        let k = key(name);
        if name == "lifts" {
            // The lifts are read when the sequence moves on.
            let _: () = redis::cmd("SET")
                .arg(key("lift_seq"))
                .arg(5)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        plant(&mut conn, &k, kind).await;
        if name == "temporary" {
            // The value is read when its stamp changes.
            let _: () = redis::cmd("SET")
                .arg(key("temporary_stamp"))
                .arg("by hand")
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        kill_switch_reaches_all(&fleet, on).await;
        let said = format!("{k} ");
        wait_until(
            &format!("{name}: named by every instance"),
            Duration::from_secs(3),
            || {
                fleet.iter().all(|n| {
                    n.follower
                        .problems()
                        .iter()
                        .any(|p| p.starts_with(&said) && p.contains(should))
                })
            },
        )
        .await;
        if name == "lift_seq" {
            // The set still loads while the lifts cannot be read.
            let from = fleet[0]
                .control
                .current()
                .await
                .unwrap()
                .map_or(0, |p| p.version);
            let v = fleet[0]
                .control
                .publish(
                    from,
                    &api_set(9, "log"),
                    "beside a bad key",
                    BTreeMap::new(),
                )
                .await
                .unwrap();
            wait_until("the publish on 3 of 3", Duration::from_secs(3), || {
                fleet.iter().all(|n| n.follower.running_version() == v)
            })
            .await;
        }
        // The registry and fleet() say it too, and every instance runs
        // the stored switches.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let view = fleet[0].control.fleet().await.expect("fleet() answers");
        assert_eq!(view.switches.disable_rate_limiting, on, "{name}");
        assert!(view.switches_not_applied().is_empty(), "{name}: {view:?}");
        for r in &view.instances {
            assert!(
                r.problems.iter().any(|p| p.starts_with(&said)),
                "{name}: {r:?}"
            );
        }
        let _: () = redis::cmd("DEL")
            .arg(&k)
            .query_async(&mut conn)
            .await
            .unwrap();
        if name == "lifts" || name == "temporary" {
            let other = if name == "lifts" {
                "lift_seq"
            } else {
                "temporary_stamp"
            };
            let _: () = redis::cmd("DEL")
                .arg(key(other))
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        wait_until(&format!("{name}: fixed"), Duration::from_secs(3), || {
            fleet.iter().all(|n| n.follower.problems().is_empty())
        })
        .await;
        on = !on;
    }
}

/// The switches' own key of the wrong type: flipping a switch is refused
/// (not a silent `Ok`), and a publish and a rule added at run time still
/// reach 3 of 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_typed_switches_key_stops_only_the_switches() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = three(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let k = format!("{prefix}control{{ctl}}:switches");
    plant(&mut conn, &k, "list").await;
    let operator = &fleet[0].control;
    let flip = operator.set_switch(Switch::DisableRateLimiting, true).await;
    let named = format!("the control key {k} holds a list where it should hold a hash");
    match &flip {
        Err(ControlError::Invalid(why)) => assert!(why.starts_with(&named), "{why}"),
        other => panic!("the flip names the key: {other:?}"),
    }
    let v = operator
        .publish(0, &api_set(9, "log"), "beside a bad key", BTreeMap::new())
        .await
        .unwrap();
    let now = fleet[0].limiter.now_ms();
    let rule = ratelimit_core::rules::RuleBuilder::new("surge")
        .expression(r#"http.request.uri.path eq "/""#)
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(now + 60_000)
        .build()
        .unwrap();
    operator.add_temporary(rule, "").await.unwrap();
    let said = format!("{k} holds a list: it should hold the switches");
    wait_until(
        "the set and the rule on 3 of 3, the key named",
        Duration::from_secs(3),
        || {
            fleet.iter().all(|n| {
                n.follower.running_version() == v
                    && n.limiter.temporary_rules().len() == 1
                    && n.follower.problems().iter().any(|p| p.starts_with(&said))
            })
        },
    )
    .await;
    let view = operator.fleet().await.expect("fleet() answers");
    assert!(
        view.problems.iter().any(|p| p.starts_with(&said)),
        "{view:?}"
    );
}

#[tokio::test]
async fn the_warning_names_the_key_and_what_it_should_hold_once() {
    let (capture, _guard) = LogCapture::install();
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = three(server.url(), &prefix).await;
    let mut conn = connect(server.url()).await;
    let key = format!("{prefix}control{{ctl}}:lift_seq");
    plant(&mut conn, &key, "list").await;
    kill_switch_reaches_all(&fleet, true).await;
    // Several polls (200 ms each): still one warning per instance.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let warned = capture.with_at_least(Level::WARN, "cannot be read");
    assert_eq!(warned.len(), 3, "{warned:#?}");
    let want = format!(
        "problem={key} holds a list: it should hold the last lift's number, a string of digits; lifts are not applied until it is fixed"
    );
    for line in &warned {
        assert!(line.contains(&want), "{line}");
    }
    assert!(
        capture.with("does not answer").is_empty(),
        "not sent to the wrong place"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_names_the_instances_that_have_not_applied_a_switch_or_a_lift() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let mut fleet = three(server.url(), &prefix).await;
    let operator = fleet[0].control.clone();
    tokio::time::sleep(Duration::from_millis(400)).await;
    // c stops following (its report stays live for a minute).
    let c = fleet.pop().expect("c");
    drop(c.follower);
    operator.set_switch(Switch::DisableJwt, true).await.unwrap();
    operator.lift("api", KeyDigest([3; 16])).await.unwrap();
    wait_until("a and b apply both", Duration::from_secs(3), || {
        fleet.iter().all(|n| n.limiter.switches().jwt_disabled())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let view = operator.fleet().await.unwrap();
    let ids = |v: Vec<&ratelimit_core::control::InstanceReport>| -> Vec<String> {
        v.iter().map(|r| r.id.clone()).collect()
    };
    assert_eq!(view.instances.len(), 3);
    assert_eq!(ids(view.switches_not_applied()), ["c"]);
    assert_eq!(view.lift_seq, 1);
    assert_eq!(ids(view.lifts_not_applied()), ["c"]);
}
