//! The Valkey key of a check is pinned byte for byte: the namespace part
//! now comes from the digest the limiter computes once per published rule
//! (`Check::namespace_digest`), and existing keys must not change.

use std::sync::Arc;

use ratelimit_core::backend::namespace;
use ratelimit_core::backend::Check;
use ratelimit_core::HashKey;
use ratelimit_testkit::checks::{digest, template, template_rule};
use ratelimit_valkey::key_of;

/// The key as it was computed before the digest moved into the check:
/// subject and a fresh digest of the namespace, both in base64url.
fn key_by_hand(prefix: &str, namespace: &str, subject: &[u8; 16]) -> String {
    let ns = HashKey::DEFAULT.digest(namespace.as_bytes());
    let b64 = |bytes: &[u8]| {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let mut n = 0u32;
            for (i, b) in chunk.iter().enumerate() {
                n |= u32::from(*b) << (16 - 8 * i);
            }
            for i in 0..=chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    };
    format!("{prefix}{{{}}}{}", b64(&subject[..12]), b64(&ns.0[..4]))
}

#[test]
fn a_key_is_byte_identical_whoever_builds_the_check() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // As the limiter builds it: the digest comes from the published rule.
    let from_limiter = rt.block_on(template());
    let rule = Arc::new(template_rule());
    let ns = namespace(&rule);
    assert_eq!(ns, "template:fw:1");
    let subject = from_limiter.subject;
    let pinned = "rl:{gX-X56C-I79eabxG}6UL8qQ";
    assert_eq!(key_of("rl:", &from_limiter), pinned);
    assert_eq!(key_by_hand("rl:", &ns, &subject.0), pinned);
    // As a backend's user builds it with Check::new: the same key.
    let by_hand = Check::new(
        rule.clone(),
        Arc::from(ns.as_str()),
        subject,
        rule.quota(1),
        None,
        None,
    );
    assert_eq!(key_of("rl:", &by_hand), pinned);
    assert_eq!(by_hand.state_key, from_limiter.state_key);
    // Another subject, another rule: only the matching part moves.
    let other = Check::new(
        rule.clone(),
        Arc::from("login:sw:60"),
        digest("198.51.100.1"),
        rule.quota(1),
        None,
        None,
    );
    let k = key_of("rl:", &other);
    assert_eq!(
        k,
        key_by_hand("rl:", "login:sw:60", &digest("198.51.100.1").0)
    );
    assert_eq!(k.len(), 27);
}
