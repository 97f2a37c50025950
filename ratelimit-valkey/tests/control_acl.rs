//! Who may write the control keys: a least-privilege ACL set-up, tested
//! against a real server. The request path's user reaches only its own
//! keys; instances follow the control channel with a user that may read
//! it and write its registry entry only; publishing takes a third user.
//! The users are created from the guide's "Running a fleet" as written
//! (`control_common::guide_acl`), for the guide's prefix `rl:`.

mod control_common;

use std::collections::BTreeMap;
use std::time::Duration;

use control_common::guide_acl::{as_user, setuser_lines};
use control_common::{api_set, wait_until};
use ratelimit_core::control::{Control, ControlError, Switch};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, RequestAttrs};
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use ratelimit_valkey::control::{FollowConfig, ValkeyControl};
use ratelimit_valkey::ValkeyBackend;

fn is_noperm(e: &ControlError) -> bool {
    matches!(e, ControlError::Unavailable(why) if why.contains("NOPERM"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_that_only_follow_cannot_publish() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let p = "rl:";
    let mut admin = connect(server.url()).await;
    for rule in setuser_lines() {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&rule)
            .query_async(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("ACL SETUSER {rule:?}: {e}"));
    }
    let url = server.url();
    let backend = ValkeyBackend::builder(as_user(url, "rl-request"))
        .key_prefix(p)
        .build()
        .await
        .expect("backend");
    let limiter = Limiter::builder(RuleSet::from_json(&api_set(2, "block")).unwrap())
        .backend(backend)
        .build();
    let follower_url = as_user(url, "rl-follower");
    let instance = ValkeyControl::open(&follower_url, p).unwrap();
    let follower = instance.follow(
        limiter.clone(),
        FollowConfig::new("edge-1").poll(Duration::from_millis(100)),
    );
    let operator = ValkeyControl::open(&as_user(url, "rl-operator"), p).unwrap();

    // The request path works under its user.
    let req = RequestAttrs::new("192.0.2.44".parse().unwrap());
    assert!(limiter.check(&req).await.is_forward());
    assert!(limiter.check(&req).await.is_forward());
    let third = limiter.check(&req).await;
    let log: redis::Value = redis::cmd("ACL")
        .arg("LOG")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(!third.is_forward(), "counted in Valkey: {third:?} {log:?}");

    // The operator publishes; the instance follows with its read-only user.
    let v = operator
        .publish(0, &api_set(9, "block"), "operator", BTreeMap::new())
        .await
        .expect("the operator publishes");
    wait_until("the follower applies it", Duration::from_secs(3), || {
        follower.running_version() == v
    })
    .await;
    let mut view = operator.fleet().await.unwrap();
    for _ in 0..300 {
        if !view.instances.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        view = operator.fleet().await.unwrap();
    }
    assert_eq!(view.instances.len(), 1, "the follower wrote its report");
    assert_eq!(operator.csrf_secret().await.map(|s| s.len()), Ok(32));

    // The follower's user cannot publish, flip a switch or read the secret
    // into being.
    let err = instance
        .publish(v, &api_set(1, "block"), "intruder", BTreeMap::new())
        .await
        .unwrap_err();
    assert!(is_noperm(&err), "{err:?}");
    let err = instance
        .set_switch(Switch::DisableRateLimiting, true)
        .await
        .unwrap_err();
    assert!(is_noperm(&err), "{err:?}");
    assert_eq!(
        instance.current().await.unwrap().map(|p| p.version),
        Some(v)
    );

    // The request path's user cannot touch the control keys, nor the
    // operator's the request path's state.
    let mut request = connect(&as_user(url, "rl-request")).await;
    let r: redis::RedisResult<()> = redis::cmd("HSET")
        .arg(format!("{p}control{{ctl}}:set"))
        .arg("version")
        .arg(1000)
        .query_async(&mut request)
        .await;
    assert_eq!(r.unwrap_err().code(), Some("NOPERM"));
    let mut op = connect(&as_user(url, "rl-operator")).await;
    let r: redis::RedisResult<Option<String>> = redis::cmd("GET")
        .arg(format!("{p}hashkey"))
        .query_async(&mut op)
        .await;
    assert_eq!(r.unwrap_err().code(), Some("NOPERM"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notices_an_instance_converges_within_the_poll() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let p = "rl:";
    let mut admin = connect(server.url()).await;
    // The follower's rules without the channel: every notice is lost.
    let rule: Vec<String> = setuser_lines()
        .into_iter()
        .find(|words| words[0] == "rl-follower")
        .expect("the guide's rl-follower")
        .iter()
        .filter(|w| !w.starts_with('&'))
        .map(|w| w.replace("rl-follower", "rl-poller"))
        .collect();
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(&rule)
        .query_async(&mut admin)
        .await
        .unwrap();
    let limiter = Limiter::new(RuleSet::default());
    let poll = Duration::from_millis(300);
    let poller = ValkeyControl::open(&as_user(server.url(), "rl-poller"), p)
        .unwrap()
        .follow(limiter, FollowConfig::new("poller").poll(poll));
    let operator = ValkeyControl::open(server.url(), p).unwrap();
    let mut worst = Duration::ZERO;
    for v in 0..5 {
        let start = std::time::Instant::now();
        operator
            .publish(v, &api_set(3 + v, "log"), "poll", BTreeMap::new())
            .await
            .unwrap();
        let took = wait_until("applied by polling", Duration::from_secs(3), || {
            poller.running_version() == v + 1
        })
        .await;
        worst = worst.max(took.max(start.elapsed()));
    }
    assert_eq!(poller.notices(), 0, "no notice reached it");
    assert!(worst < poll + Duration::from_millis(200), "worst {worst:?}");
}
