//! A lift applies fleet-wide: the shared state is reset once, and every
//! instance drops the penalty it holds in its local cache.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::{api_set, fleet, wait_until};
use ratelimit_core::control::{Control, ControlError};
use ratelimit_core::{KeyDigest, Outcome, RequestAttrs};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::ValkeyServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lift_drops_the_penalty_on_every_instance() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("ctl");
    let fleet = fleet(server.url(), &prefix).await;
    let operator = &fleet[0].control;
    operator
        .publish(0, &api_set(1, "block"), "block", BTreeMap::new())
        .await
        .unwrap();
    wait_until("the set is applied", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.running_version() == 1)
    })
    .await;
    let req = RequestAttrs::new("203.0.113.50".parse().unwrap());
    // The first check admits, the second starts the 10-minute penalty;
    // every instance then holds it in its penalty cache.
    let _ = fleet[0].limiter.check(&req).await;
    for n in &fleet {
        assert_eq!(
            n.limiter.check(&req).await.outcome,
            Outcome::Limited,
            "{}",
            n.id
        );
    }
    let subject = fleet[0].limiter.subject_of("api", &req).unwrap();
    for n in &fleet {
        let d = n.limiter.peek_subject("api", subject).await.unwrap();
        assert!(d.blocked_until_ms.is_some(), "{} holds the penalty", n.id);
    }

    operator.lift("api", subject).await.expect("lift");
    let mut lifted = [false; 3];
    for _ in 0..1000 {
        for (i, n) in fleet.iter().enumerate() {
            let d = n.limiter.peek_subject("api", subject).await.unwrap();
            lifted[i] = d.allowed && d.blocked_until_ms.is_none();
        }
        if lifted.iter().all(|l| *l) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(
        lifted, [true; 3],
        "every instance dropped its cached penalty"
    );
    assert!(fleet[2].limiter.check(&req).await.is_forward());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lift_of_an_unknown_rule_is_refused_by_name() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let fleet = fleet(server.url(), &unique("ctl")).await;
    let err = fleet[0]
        .control
        .lift("nope", KeyDigest([1; 16]))
        .await
        .unwrap_err();
    assert_eq!(err, ControlError::Invalid("no rule \"nope\"".into()));
}
