//! The fleet's hash key: created once in Valkey and read by every
//! instance, so two backends on one server hash alike; an explicit key
//! wins; the limiter hashes with the backend's key.

use std::time::Duration;

use ratelimit_core::backend::Backend;
use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, Limiter, RequestAttrs};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect as raw, server};
use ratelimit_valkey::ValkeyBackend;

async fn backend(url: &str, prefix: &str) -> ValkeyBackend {
    ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .require_connection(true)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The key stored at `<prefix>hashkey`.
async fn stored(url: &str, prefix: &str) -> Option<HashKey> {
    let mut conn = raw(url).await;
    let hex: Option<String> = redis::cmd("GET")
        .arg(format!("{prefix}hashkey"))
        .query_async(&mut conn)
        .await
        .expect("get");
    let hex = hex?;
    let bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    Some(HashKey::new(bytes.try_into().expect("16 bytes")))
}

#[tokio::test]
async fn two_backends_on_one_server_share_the_key_stored_in_valkey() {
    let server = server();
    let prefix = unique("h");
    let a = backend(server.url(), &prefix).await;
    let b = backend(server.url(), &prefix).await;
    let key = a.hash_key().expect("read at build");
    assert_eq!(
        b.hash_key(),
        Some(key),
        "the second instance reads the first's key"
    );
    assert_eq!(stored(server.url(), &prefix).await, Some(key));
    assert_ne!(key, HashKey::DEFAULT);

    let other = backend(server.url(), &unique("h")).await;
    assert_ne!(other.hash_key(), Some(key), "another prefix, another key");
}

#[tokio::test]
async fn an_explicit_key_wins_and_nothing_is_stored() {
    let server = server();
    let prefix = unique("h");
    let mine = HashKey::new([7; 16]);
    let a = ValkeyBackend::builder(server.url())
        .key_prefix(&prefix)
        .hash_key(mine)
        .build()
        .await
        .expect("backend");
    assert_eq!(a.hash_key(), Some(mine));
    assert_eq!(stored(server.url(), &prefix).await, None);
    // Even where the fleet has a stored key, the explicit one wins.
    let shared = backend(server.url(), &prefix).await;
    let b = ValkeyBackend::builder(server.url())
        .key_prefix(&prefix)
        .hash_key(mine)
        .build()
        .await
        .expect("backend");
    assert_ne!(shared.hash_key(), Some(mine));
    assert_eq!(b.hash_key(), Some(mine));
}

#[tokio::test]
async fn limiters_on_two_instances_hash_subjects_alike() {
    let server = server();
    let prefix = unique("h");
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .build()
        .expect("rule");
    let rules = || RuleSet::from_rules(vec![rule.clone()]).expect("rules");
    let a = backend(server.url(), &prefix).await;
    let key = a.hash_key().expect("key");
    let one = Limiter::builder(rules()).backend(a).build();
    let two = Limiter::builder(rules())
        .backend(backend(server.url(), &prefix).await)
        .build();
    let req = RequestAttrs::new("203.0.113.7".parse().expect("ip"));
    let s1 = one.subject_of("api", &req).expect("subject");
    assert_eq!(two.subject_of("api", &req).expect("subject"), s1);
    assert_eq!(
        subject(&rule, &req, &key, false),
        KeyOutcome::Subject(s1),
        "hashed with the fleet's key"
    );
    // A limiter with a key of its own keeps it.
    let own = Limiter::builder(rules())
        .backend(backend(server.url(), &prefix).await)
        .hash_key(HashKey::DEFAULT)
        .build();
    assert_ne!(own.subject_of("api", &req).expect("subject"), s1);
}
