//! Memory per subject (`MEMORY USAGE`) for each algorithm, and every key
//! has a TTL. Valkey time (not injected), so TTLs are real.
#![allow(clippy::print_stderr)]

use std::time::Duration;

use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_testkit::checks::{check_of, one, template};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, server};
use ratelimit_valkey::ValkeyBackend;

fn rules() -> Vec<(Rule, u64)> {
    let m = Duration::from_secs(60);
    let b = |id: &str| RuleBuilder::new(id).key(["ip"]);
    vec![
        (b("login").fixed_window(100, m).build().expect("rule"), 40),
        (b("login").sliding_window(100, m).build().expect("rule"), 40),
        (
            b("login").token_bucket(100, m, 50).build().expect("rule"),
            40,
        ),
        (
            b("login").leaky_bucket(100, m, 50).build().expect("rule"),
            40,
        ),
        (
            b("login").distinct("path", 50, m).build().expect("rule"),
            128 + 48,
        ),
    ]
}

#[tokio::test]
async fn memory_per_subject_is_small_and_every_key_expires() {
    // A server of its own, so the default prefix `rl:` (what users get)
    // cannot collide with other tests' keys. One connection: connections
    // made in parallel leave the server's heap in a different state from
    // run to run, and a glibc-built server then sometimes hands a key a
    // chunk 16 bytes larger than it asked for (`MEMORY USAGE` 72, not 56).
    let server = ratelimit_testkit::valkey::spawned();
    let prefix = "rl:".to_owned();
    let backend = ValkeyBackend::builder(server.url())
        .key_prefix(&prefix)
        .connections(1)
        .build()
        .await
        .expect("backend");
    let mut conn = connect(server.url()).await;
    let template = template().await;
    for (rule, target) in rules() {
        let check = check_of(&template, &rule, "203.0.113.7", 1, Some(7));
        for _ in 0..3 {
            one(&backend, &check, 0).await.expect("answered");
        }
        let key = backend.key_of(&check);
        let bytes: u64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .expect("memory usage");
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .expect("pttl");
        let value_len: u64 = redis::cmd("STRLEN")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .expect("strlen");
        let encoding: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .expect("encoding");
        if rule.algorithm != ratelimit_core::algorithm::Algorithm::Distinct {
            assert_eq!(encoding, "int", "{key}: counters are stored as integers");
        }
        eprintln!(
            "{:<15} key {} bytes, value {value_len} bytes ({encoding}), MEMORY USAGE {bytes}, PTTL {pttl}",
            rule.algorithm.as_str(),
            key.len(),
        );
        assert!(pttl > 0, "{key} has a TTL");
        // The key name is 27 bytes (prefix, 16 + 6 base64url characters)
        // and the key object ~35 more (header, expiry, allocator rounding);
        // an integer value adds nothing (stored in the key object), the
        // distinct map its 128 bytes plus a string header.
        if rule.algorithm != ratelimit_core::algorithm::Algorithm::Distinct {
            assert!(
                bytes <= 64,
                "{key}: {bytes} bytes for a counter (target 64)"
            );
        } else {
            assert!(bytes <= 200, "{key}: {bytes} bytes for a distinct map");
        }
        let overhead = bytes.saturating_sub(key.len() as u64);
        assert!(
            overhead <= target,
            "{key}: {bytes} bytes, {overhead} beyond the key name"
        );
    }
    // Nothing without a TTL under our prefix but the fleet's hash key,
    // which must outlive every state (see the crate docs).
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .expect("keys");
    assert_eq!(keys.len(), 6);
    for k in keys {
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&k)
            .query_async(&mut conn)
            .await
            .expect("pttl");
        if k == format!("{prefix}hashkey") {
            assert_eq!(pttl, -1, "the hash key is kept");
        } else {
            assert!(pttl > 0, "{k}");
        }
    }
}

#[tokio::test]
async fn a_penalty_marker_is_small_and_expires_at_the_penalty_end() {
    let server = server();
    let backend = ValkeyBackend::builder(server.url())
        .key_prefix(unique("m"))
        .build()
        .await
        .expect("backend");
    let mut conn = connect(server.url()).await;
    let rule = RuleBuilder::new("login")
        .key(["ip"])
        .fixed_window(1, Duration::from_secs(60))
        .penalty(Duration::from_secs(300))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.9", 1, None);
    assert!(one(&backend, &check, 0).await.expect("ok").allowed);
    let d = one(&backend, &check, 0).await.expect("ok");
    assert!(d.blocked_until_ms.is_some());
    let key = backend.key_of(&check);
    let bytes: u64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("usage");
    let pttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("pttl");
    eprintln!(
        "penalty marker  key {} bytes, MEMORY USAGE {bytes}, PTTL {pttl}",
        key.len()
    );
    assert!(
        (299_000..=300_000).contains(&pttl),
        "expires at the penalty end: {pttl}"
    );
}
