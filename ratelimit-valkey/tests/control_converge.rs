//! Three instances against a real valkey-server: how fast a publish and
//! the kill switch reach all of them. Prints the figures the guide quotes
//! (`cargo test -p ratelimit-valkey --test control_converge -- --nocapture`).
#![allow(clippy::print_stderr)]

mod control_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use control_common::{api_set, fleet, quantile, wait_until};
use ratelimit_core::control::{Control, Switch};
use ratelimit_core::{Outcome, RequestAttrs};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::ValkeyServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_publishes_reach_three_instances_with_p99_under_a_second() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    let mut times = Vec::new();
    for i in 0..100u64 {
        let limit = 100 + i;
        let start = Instant::now();
        let v = operator
            .publish(i, &api_set(limit, "log"), "bench", BTreeMap::new())
            .await
            .expect("publish");
        assert_eq!(v, i + 1);
        wait_until(
            "every instance applies the publish",
            Duration::from_secs(5),
            || fleet.iter().all(|n| n.follower.running_version() == v),
        )
        .await;
        times.push(start.elapsed());
        for n in &fleet {
            assert_eq!(n.limiter.rules().get("api").map(|r| r.limit), Some(limit));
        }
    }
    let (p50, p99) = (quantile(&mut times, 0.5), quantile(&mut times, 0.99));
    eprintln!("publish convergence, 3 instances, 100 publishes: p50 {p50:?}, p99 {p99:?}");
    assert!(p99 < Duration::from_secs(1), "p99 {p99:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kill_switch_stops_blocking_on_every_instance() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    operator
        .publish(0, &api_set(1, "block"), "block at 1", BTreeMap::new())
        .await
        .expect("publish");
    wait_until("the set is applied", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.running_version() == 1)
    })
    .await;
    let req = RequestAttrs::new("198.51.100.9".parse().unwrap());
    for n in &fleet {
        let _ = n.limiter.check(&req).await;
        assert_eq!(
            n.limiter.check(&req).await.outcome,
            Outcome::Limited,
            "{}",
            n.id
        );
    }

    let start = Instant::now();
    operator
        .set_switch(Switch::DisableRateLimiting, true)
        .await
        .expect("switch");
    let took = wait_until(
        "the kill switch on every instance",
        Duration::from_secs(1),
        || {
            fleet
                .iter()
                .all(|n| n.limiter.switches().rate_limiting_disabled())
        },
    )
    .await;
    eprintln!(
        "kill switch, 3 instances: applied everywhere in {:?}",
        start.elapsed()
    );
    assert!(took < Duration::from_secs(1));
    for n in &fleet {
        assert!(
            n.limiter.check(&req).await.is_forward(),
            "{} still blocks",
            n.id
        );
    }
    let view = operator.fleet().await.expect("fleet");
    assert!(view.switches.disable_rate_limiting);
}
