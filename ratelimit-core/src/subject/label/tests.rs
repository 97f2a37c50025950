//! Subject labels: each part written `part=value`, credentials redacted,
//! values cut and cleaned, an IPv6 client as its /64, a missing part as
//! the fallback address.

use super::*;
use crate::rules::RuleBuilder;
use crate::RequestAttrs;
use std::time::Duration;

fn rule(key: &[&str]) -> Rule {
    RuleBuilder::new("r")
        .fixed_window(5, Duration::from_secs(60))
        .key(key.iter().copied())
        .build()
        .unwrap()
}

fn req() -> RequestAttrs {
    RequestAttrs::new("2001:db8:1:2:3:4:5:6".parse().unwrap())
        .with_header("x-tenant", "acme")
        .with_header("authorization", "Bearer s3cret")
        .with_header("x-api-key", "k-123")
        .with_header("cookie", "sid=abc; theme=dark")
        .with_query("user=bob&token=t0k")
}

#[test]
fn an_ipv6_client_is_its_64_and_named_parts_read_as_part_equals_value() {
    let l = label(
        &rule(&["ip", "header:x-tenant", "query:user"]),
        &req(),
        false,
    );
    assert_eq!(
        l.as_deref(),
        Some("ip=2001:db8:1:2::/64, header:x-tenant=acme, query:user=bob")
    );
    let v4 = RequestAttrs::new("203.0.113.7".parse().unwrap());
    assert_eq!(
        label(&rule(&["ip"]), &v4, false).as_deref(),
        Some("ip=203.0.113.7")
    );
}

#[test]
fn credentials_are_redacted() {
    let key = [
        "header:authorization",
        "header:x-api-key",
        "cookie:theme",
        "query:token",
    ];
    let l = label(&rule(&key), &req(), false).unwrap();
    for secret in ["s3cret", "Bearer", "k-123", "dark", "t0k"] {
        assert!(!l.contains(secret), "{secret} leaked in {l}");
    }
    assert_eq!(l.matches("[redacted]").count(), 4, "{l}");
}

#[test]
fn a_missing_part_is_the_fallback_address_or_nothing() {
    let r = RuleBuilder::new("r")
        .fixed_window(5, Duration::from_secs(60))
        .key(["header:x-user"])
        .on_missing_key(OnMissingKey::FallbackIp)
        .build()
        .unwrap();
    let v4 = RequestAttrs::new("203.0.113.7".parse().unwrap());
    assert_eq!(
        label(&r, &v4, false).as_deref(),
        Some("ip=203.0.113.7 (fallback)")
    );
    let skip = RuleBuilder::new("r")
        .fixed_window(5, Duration::from_secs(60))
        .key(["header:x-user"])
        .on_missing_key(OnMissingKey::Skip)
        .build()
        .unwrap();
    assert_eq!(label(&skip, &v4, false), None);
}

#[test]
fn hostile_values_are_cut_and_control_characters_replaced() {
    let long = "é".repeat(10_000);
    let r = RequestAttrs::new("203.0.113.7".parse().unwrap())
        .with_header("x-tenant", format!("a\u{7}\n{long}"));
    let l = label(&rule(&["header:x-tenant"]), &r, false).unwrap();
    assert!(l.starts_with("header:x-tenant=a??é"), "{l}");
    assert!(l.ends_with('…'));
    assert_eq!(l.chars().count(), "header:x-tenant=".len() + MAX_VALUE + 1);
    let bytes =
        RequestAttrs::new("203.0.113.7".parse().unwrap()).with_header("x-tenant", b"\xff\xfeok");
    let l = label(&rule(&["header:x-tenant"]), &bytes, false).unwrap();
    assert_eq!(l, "header:x-tenant=\u{fffd}\u{fffd}ok");
}
