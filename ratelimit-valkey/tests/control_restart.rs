//! Valkey going away: restarted without persistence (the control keys are
//! gone), and an instance that starts while it is down.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, fleet, instance, wait_until};
use ratelimit_core::control::{Control, Switch};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode, ValkeyServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_without_persistence_instances_keep_their_set_and_report_it() {
    let mut server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let port = server.port().expect("port");
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    for v in 0..3 {
        operator
            .publish(v, &api_set(7 + v, "block"), "before", BTreeMap::new())
            .await
            .unwrap();
    }
    operator.set_switch(Switch::DisableJwt, true).await.unwrap();
    wait_until(
        "version 3 and the switch everywhere",
        Duration::from_secs(2),
        || {
            fleet
                .iter()
                .all(|n| n.follower.running_version() == 3 && n.limiter.switches().jwt_disabled())
        },
    )
    .await;

    server.kill();
    let _server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    wait_until(
        "every instance notices the keys are gone",
        Duration::from_secs(5),
        || fleet.iter().all(|n| n.follower.control_lost()),
    )
    .await;
    for n in &fleet {
        assert_eq!(n.follower.running_version(), 3, "{}", n.id);
        assert_eq!(
            n.limiter.rules().get("api").map(|r| r.limit),
            Some(9),
            "no empty set adopted"
        );
        assert!(n.limiter.switches().jwt_disabled(), "switches kept");
        let (v, why) = n.follower.refused().expect("reported");
        assert_eq!(v, 0);
        assert!(why.contains("gone"), "{why}");
    }
    // The registry is back once the instances report again, and shows it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let view = operator.fleet().await.unwrap();
    assert_eq!(view.published, None);
    assert_eq!(view.refusing(0).len(), 3, "{view:?}");

    // An operator's next publish starts again from version 0: a new
    // lineage, which every instance follows although 1 < 3.
    assert_eq!(operator.current().await.unwrap(), None);
    let v = operator
        .publish(0, &api_set(42, "block"), "after", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(v, 1);
    wait_until("the new lineage everywhere", Duration::from_secs(2), || {
        fleet
            .iter()
            .all(|n| n.follower.running_version() == 1 && !n.follower.control_lost())
    })
    .await;
    for n in &fleet {
        assert_eq!(n.limiter.rules().get("api").map(|r| r.limit), Some(42));
        assert_eq!(n.follower.refused(), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_started_during_an_outage_runs_its_own_set_then_converges() {
    let mut server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let port = server.port().expect("port");
    let url = server.url().to_string();
    let prefix = unique("ctl");
    server.kill();
    let late = instance(&url, &prefix, "late", &api_set(3, "log")).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(late.follower.running_version(), 0);
    assert_eq!(late.limiter.rules().get("api").map(|r| r.limit), Some(3));

    let _server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let fleet = fleet(&url, &prefix).await;
    fleet[0]
        .control
        .publish(0, &api_set(11, "log"), "after the outage", BTreeMap::new())
        .await
        .unwrap();
    wait_until(
        "the late instance converges",
        Duration::from_secs(3),
        || {
            late.follower.running_version() == 1
                && fleet.iter().all(|n| n.follower.running_version() == 1)
        },
    )
    .await;
    assert_eq!(late.limiter.rules().get("api").map(|r| r.limit), Some(11));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_cut_off_keeps_its_set_and_switches_and_converges_when_back() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let proxy = ChaosProxy::start(format!("127.0.0.1:{}", server.port().expect("port")))
        .await
        .expect("proxy");
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let cut = instance(&proxy.url(), &prefix, "cut", "[]").await;
    let operator = &fleet[0].control;
    operator
        .publish(0, &api_set(5, "block"), "one", BTreeMap::new())
        .await
        .unwrap();
    operator
        .set_switch(Switch::DisableConfigBlocking, true)
        .await
        .unwrap();
    wait_until("the cut instance follows", Duration::from_secs(2), || {
        cut.follower.running_version() == 1 && cut.limiter.switches().config_blocking_disabled()
    })
    .await;

    proxy.set_mode(ProxyMode::Down);
    operator
        .publish(1, &api_set(6, "block"), "two", BTreeMap::new())
        .await
        .unwrap();
    operator
        .set_switch(Switch::DisableConfigBlocking, false)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        cut.follower.running_version(),
        1,
        "keeps its set while cut off"
    );
    assert_eq!(cut.limiter.rules().get("api").map(|r| r.limit), Some(5));
    assert!(
        cut.limiter.switches().config_blocking_disabled(),
        "keeps its switches"
    );
    assert_eq!(cut.follower.refused(), None);

    proxy.set_mode(ProxyMode::Pass);
    wait_until(
        "the cut instance converges when back",
        Duration::from_secs(3),
        || {
            cut.follower.running_version() == 2
                && !cut.limiter.switches().config_blocking_disabled()
        },
    )
    .await;
    assert_eq!(cut.limiter.rules().get("api").map(|r| r.limit), Some(6));
}
