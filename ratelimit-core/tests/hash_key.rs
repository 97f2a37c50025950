//! The default hash key is secret: values crafted offline to collide in a
//! `distinct` map under the public `HashKey::DEFAULT` beat a limiter that
//! hashes with it, and do not beat the default limiter.

use std::time::Duration;

use ratelimit_core::algorithm::distinct;
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, Limiter, ManualClock, Outcome, RequestAttrs};

/// 100 zero-padded item ids that all land on one bit of the distinct map
/// under the public key: what an attacker computes offline.
fn crafted_ids() -> Vec<String> {
    let target = distinct::bit_of(&HashKey::DEFAULT, b"0000000000");
    (0u64..)
        .map(|i| format!("{i:010}"))
        .filter(|id| distinct::bit_of(&HashKey::DEFAULT, id.as_bytes()) == target)
        .take(100)
        .collect()
}

fn rules() -> RuleSet {
    let rule = RuleBuilder::new("items")
        .expression(r#"http.request.uri.path eq "/item""#)
        .distinct("query:id", 10, Duration::from_secs(60))
        .key(["ip"])
        .build()
        .expect("rule");
    RuleSet::from_rules(vec![rule]).expect("rule set")
}

/// How many of the crafted ids one client gets served.
async fn served(limiter: &Limiter) -> usize {
    let mut served = 0;
    for id in crafted_ids() {
        let req = RequestAttrs::new("203.0.113.7".parse().expect("ip"))
            .with_path("/item")
            .with_query(format!("id={id}"));
        if limiter.check(&req).await.outcome == Outcome::Forward {
            served += 1;
        }
    }
    served
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

#[test]
fn ids_crafted_for_the_public_key_beat_a_limiter_that_uses_it() {
    let clock = ManualClock::new(1_767_225_600_000);
    let limiter = Limiter::builder(rules())
        .clock(clock)
        .hash_key(HashKey::DEFAULT)
        .build();
    assert_eq!(
        block_on(served(&limiter)),
        100,
        "100 different items under a limit of 10: the attack works on the public key"
    );
}

#[test]
fn the_default_limiter_limits_the_crafted_ids() {
    let clock = ManualClock::new(1_767_225_600_000);
    let limiter = Limiter::builder(rules()).clock(clock).build();
    let n = block_on(served(&limiter));
    // Estimates stay within 10% up to 1000 values: about 11 get through.
    assert!(
        n <= 15,
        "the default limiter served {n} of 100 different items"
    );
}

#[test]
fn limiter_new_does_not_hash_with_the_public_key() {
    let limiter = Limiter::new(rules());
    let n = block_on(served(&limiter));
    assert!(n <= 15, "Limiter::new served {n} of 100 different items");
}
