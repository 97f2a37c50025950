use super::*;
use crate::rules::RuleBuilder;
use std::collections::BTreeMap;
use std::time::Duration;

fn rule(key: &[&str], missing: OnMissingKey) -> Rule {
    RuleBuilder::new("r")
        .fixed_window(5, Duration::from_secs(60))
        .key(key.iter().copied())
        .on_missing_key(missing)
        .build()
        .unwrap()
}

fn req(ip: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().unwrap())
}

fn subj(r: &Rule, q: &RequestAttrs) -> KeyOutcome {
    subject(r, q, &HashKey::DEFAULT, false)
}

#[test]
fn ipv6_is_keyed_per_64_and_mapped_v4_as_v4() {
    let r = rule(&["ip"], OnMissingKey::FallbackIp);
    assert_eq!(
        subj(&r, &req("2001:db8:1:2::1")),
        subj(&r, &req("2001:db8:1:2:ffff::9"))
    );
    assert_ne!(
        subj(&r, &req("2001:db8:1:2::1")),
        subj(&r, &req("2001:db8:1:3::1"))
    );
    assert_eq!(
        subj(&r, &req("::ffff:192.0.2.1")),
        subj(&r, &req("192.0.2.1"))
    );
}

#[test]
fn repeated_values_key_on_the_first() {
    let r = rule(&["ip", "header:x-t"], OnMissingKey::FallbackIp);
    let a = req("192.0.2.1")
        .with_header("x-t", "a")
        .with_header("x-t", "b");
    let b = req("192.0.2.1").with_header("x-t", "a");
    let c = req("192.0.2.1")
        .with_header("x-t", "b")
        .with_header("x-t", "a");
    assert_eq!(subj(&r, &a), subj(&r, &b));
    assert_ne!(subj(&r, &a), subj(&r, &c));
    let q = rule(&["ip", "query:u"], OnMissingKey::FallbackIp);
    assert_eq!(
        subj(&q, &req("192.0.2.1").with_query("u=1&u=2")),
        subj(&q, &req("192.0.2.1").with_query("u=%31"))
    );
}

#[test]
fn fallback_key_cannot_be_reached_by_a_client_value() {
    let by_claim = rule(&["jwt_claim:sub"], OnMissingKey::FallbackIp);
    let by_ip = rule(&["ip"], OnMissingKey::FallbackIp);
    let anon = req("192.0.2.1");
    let mut claims = BTreeMap::new();
    claims.insert("sub".to_owned(), "192.0.2.1".to_owned());
    let spoof = req("198.51.100.1").with_jwt_claims(claims);
    assert_eq!(
        subj(&by_claim, &anon),
        KeyOutcome::Subject(fallback(&anon, &HashKey::DEFAULT))
    );
    assert_ne!(subj(&by_claim, &anon), subj(&by_claim, &spoof));
    assert_ne!(
        subj(&by_claim, &anon),
        subj(&by_ip, &anon),
        "fallback is not the ip key"
    );
}

#[test]
fn missing_key_skip_reject_and_jwt_switch() {
    let mut claims = BTreeMap::new();
    claims.insert("sub".to_owned(), "user-42".to_owned());
    let with = req("192.0.2.1").with_jwt_claims(claims);
    let without = req("192.0.2.1");
    let skip = rule(&["jwt_claim:sub"], OnMissingKey::Skip);
    let reject = rule(&["jwt_claim:sub"], OnMissingKey::Reject);
    assert!(matches!(subj(&skip, &with), KeyOutcome::Subject(_)));
    assert_eq!(subj(&skip, &without), KeyOutcome::Skip);
    assert_eq!(subj(&reject, &without), KeyOutcome::Reject);
    assert_eq!(
        subject(&reject, &with, &HashKey::DEFAULT, true),
        KeyOutcome::Reject,
        "claims off"
    );
}

#[test]
fn long_values_cost_a_fixed_digest() {
    let r = rule(&["ip", "header:x-t"], OnMissingKey::FallbackIp);
    let long = req("192.0.2.1").with_header("x-t", vec![b'a'; 65_536]);
    assert!(matches!(subj(&r, &long), KeyOutcome::Subject(KeyDigest(_))));
}

/// The encoding of one part, as `push` writes it.
fn encoded(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

#[test]
fn key_digests_are_the_digest_of_the_whole_encoding() {
    // Each part is a tag, a 4-byte length and the value, whatever the
    // lengths (around and past SipHash's 8-byte blocks).
    let r = rule(
        &["ip", "header:x-t", "header:x-u"],
        OnMissingKey::FallbackIp,
    );
    for (t, u) in [
        (1, 1),
        (40, 3),
        (50, 20),
        (64, 1),
        (65, 64),
        (200, 7),
        (3, 300),
    ] {
        let (vt, vu) = (vec![b't'; t], vec![b'u'; u]);
        let q = req("192.0.2.1")
            .with_header("x-t", vt.clone())
            .with_header("x-u", vu.clone());
        let mut whole = Vec::new();
        encoded(&mut whole, 1, &[192, 0, 2, 1]);
        encoded(&mut whole, 0, b"x-t");
        encoded(&mut whole, 3, &vt);
        encoded(&mut whole, 0, b"x-u");
        encoded(&mut whole, 3, &vu);
        let want = KeyOutcome::Subject(HashKey::DEFAULT.digest(&whole));
        assert_eq!(subj(&r, &q), want, "values of {t} and {u} bytes");
    }
}

#[test]
fn parts_do_not_run_into_each_other() {
    let r = rule(&["ip", "header:a", "header:b"], OnMissingKey::FallbackIp);
    let x = req("192.0.2.1")
        .with_header("a", "xy")
        .with_header("b", "z");
    let y = req("192.0.2.1")
        .with_header("a", "x")
        .with_header("b", "yz");
    assert_ne!(subj(&r, &x), subj(&r, &y));
}

#[test]
fn paths_are_normalized_for_distinct() {
    assert_eq!(normalize_path("/a//b/../c"), b"/a/c");
    assert_eq!(normalize_path("/a/./%62"), b"/a/b");
    assert_eq!(normalize_path("/../.."), b"/");
    assert_eq!(normalize_path(""), b"/");
    assert_eq!(normalize_path("/a/"), b"/a/");
    assert_eq!(normalize_path("/%2e%2e/x"), b"/x");
    assert_eq!(normalize_path("/a+b"), b"/a+b");
    assert_ne!(
        normalize_path("/p/%ff"),
        normalize_path("/p/%fe"),
        "invalid UTF-8 stays apart"
    );
}

// What the `request_keys` fuzz target did with the decoders before they
// became crate-private: any input decodes without a panic, a decoded
// `distinct` value is stable, and a normalized path starts with `/`.
proptest::proptest! {
    #[test]
    fn decoders_take_any_input(s in ".{0,40}", raw in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
        use crate::request::{percent_decode, percent_decode_bytes};
        let text = String::from_utf8_lossy(&raw).into_owned();
        for input in [s.as_str(), text.as_str()] {
            let bytes = percent_decode_bytes(input);
            let lossy = percent_decode(input);
            let expected = String::from_utf8_lossy(&bytes);
            proptest::prop_assert_eq!(lossy.as_ref(), expected.as_ref());
            if !input.contains(['%', '+']) {
                proptest::prop_assert_eq!(bytes.as_ref(), input.as_bytes());
            }
            let path = normalize_path(input);
            proptest::prop_assert!(path.starts_with(b"/"), "{:?}", path);
            let q = RequestAttrs::new("192.0.2.1".parse().unwrap())
                .with_path(input)
                .with_query(format!("v={input}"));
            for of in [DistinctOf::Path, DistinctOf::Query("v".into()), DistinctOf::Ip] {
                proptest::prop_assert_eq!(distinct_value(&of, &q), distinct_value(&of, &q));
            }
        }
    }
}

#[test]
fn a_key_continued_from_an_earlier_rules_prefix_is_the_same_subject() {
    use OnMissingKey::{FallbackIp, Reject, Skip};
    let rules = [
        rule(&["ip"], FallbackIp),
        rule(&["ip", "header:x-user"], FallbackIp),
        rule(&["ip"], Skip),
        rule(&["ip", "header:x-user", "cookie:sid"], Reject),
        rule(&["ip", "header:x-other"], Skip),
        rule(&["header:x-user"], FallbackIp),
        rule(&["ip", "header:x-user"], Reject),
        rule(&["header:x-user", "ip"], FallbackIp),
        rule(&["jwt_claim:sub"], FallbackIp),
        rule(&["jwt_claim:sub", "ip"], Skip),
        rule(&["jwt_claim:sub"], Skip),
    ];
    let claims = BTreeMap::from([("sub".to_owned(), "user-42".to_owned())]);
    let reqs = [
        req("192.0.2.7"),
        req("2001:db8::1").with_header("x-user", "ann"),
        req("192.0.2.7")
            .with_header("x-user", "bob")
            .with_header("cookie", "sid=42"),
        req("192.0.2.8").with_header("x-other", "o"),
        req("192.0.2.9").with_jwt_claims(claims),
    ];
    let k = HashKey::new([7; 16]);
    for q in &reqs {
        // Every order of every pair, and the whole list both ways.
        let mut orders: Vec<Vec<&Rule>> =
            vec![rules.iter().collect(), rules.iter().rev().collect()];
        for a in &rules {
            for b in &rules {
                orders.push(vec![a, b]);
            }
        }
        for order in &orders {
            // The JWT switch steady, and flipping between every two rules.
            for flips in [false, true] {
                let mut prefix = None;
                for (i, r) in order.iter().enumerate() {
                    let jwt_off = flips && i % 2 == 1;
                    let shared = subject_after(r, q, &k, jwt_off, &mut prefix, true);
                    assert_eq!(shared, subject(r, q, &k, jwt_off), "{:?} {q:?}", r.key);
                }
            }
        }
    }
}

#[test]
fn an_address_key_hashed_in_words_is_the_same_subject() {
    // `ip_subject` (a plain rule keyed on `ip` alone) against the general
    // path and against the whole encoding hashed at once, for IPv4, IPv6
    // (its /64) and IPv4-mapped IPv6, under several hash keys.
    let r = rule(&["ip"], OnMissingKey::FallbackIp);
    let keys = [
        HashKey::DEFAULT,
        HashKey::new([0; 16]),
        HashKey::new(core::array::from_fn(|i| i as u8 * 17)),
    ];
    for ip in [
        "192.0.2.1",
        "0.0.0.0",
        "255.255.255.255",
        "203.0.113.77",
        "2001:db8:1:2::1",
        "ffff:ffff:ffff:ffff::",
        "::",
        "::ffff:198.51.100.9",
    ] {
        let addr: IpAddr = ip.parse().unwrap();
        let (b, n) = ip_bytes(addr);
        let mut whole = Vec::new();
        encoded(&mut whole, 1, &b[..n]);
        for key in keys {
            let fast = ip_subject(&key, addr);
            assert_eq!(fast, key.digest(&whole), "{ip}");
            let general = subject(&r, &req(ip), &key, false);
            assert_eq!(KeyOutcome::Subject(fast), general, "{ip}");
        }
    }
}
