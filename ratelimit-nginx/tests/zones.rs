//! "Zones", "The key", and reloads ("Limits are kept per process").

use std::sync::Arc;

mod support;

use ratelimit_nginx::{ConfigErrorKind, LimitConnStatus};
use support::*;
use LimitReqStatus::{Passed, Rejected};

#[test]
fn a_limit_req_zone_is_a_leaky_bucket_per_key_draining_at_the_rate() {
    let policy = req_policy(
        "limit_req_zone $client_ip zone=z:1m rate=2r/s;",
        "limit_req zone=z;",
    );
    let clock = clock();
    let (a, b) = (from("192.0.2.1"), from("192.0.2.2"));
    assert_eq!(policy.check(&a, T0).status(), Some(Passed));
    assert_eq!(policy.check(&a, T0).status(), Some(Rejected));
    assert_eq!(
        policy.check(&b, T0).status(),
        Some(Passed),
        "another key has its own bucket"
    );
    clock.advance(ms(500));
    assert_eq!(
        policy.check(&a, clock.now_ms()).status(),
        Some(Passed),
        "2r/s drains a request in 500 ms"
    );
}

#[test]
fn a_limit_conn_zone_counts_requests_in_progress_per_key() {
    let conn = conn_policy("limit_conn_zone $client_ip zone=c:1m;", "limit_conn c 1;");
    let _a = conn.acquire(&from("192.0.2.1")).into_permit();
    assert_eq!(
        conn.acquire(&from("192.0.2.1")).status(),
        Some(LimitConnStatus::Rejected)
    );
    assert_eq!(
        conn.acquire(&from("192.0.2.2")).status(),
        Some(LimitConnStatus::Passed)
    );
}

#[test]
fn zones_may_appear_anywhere_in_the_top_level() {
    let config = NginxConfig::parse(
        "limit_req zone=late burst=1;\nlimit_conn conns 2;\n\
         limit_conn_zone $client_ip zone=conns:1m;\nlimit_req_zone $client_ip zone=late:1m rate=1r/s;",
    )
    .expect("zones after their use");
    assert_eq!(config.top().limit_req()[0].zone(), "late");
    assert_eq!(config.zones().len(), 2);
}

#[test]
fn each_zone_name_is_used_once_across_both_kinds() {
    let err = NginxConfig::parse(
        "limit_req_zone $client_ip zone=x:1m rate=1r/s;\nlimit_conn_zone $host zone=x:1m;",
    )
    .expect_err("duplicate");
    assert_eq!(err.kind(), &ConfigErrorKind::DuplicateZone);
    assert_eq!(
        (err.line(), err.column(), err.directive()),
        (Some(2), Some(1), Some("limit_conn_zone"))
    );
    assert_eq!(
        err.message(),
        "zone \"x\" is already defined (first defined at line 1)"
    );
}

#[test]
fn a_limit_req_zone_holds_size_over_128_states_and_a_limit_conn_zone_size_over_64() {
    let z = zones(
        "limit_req_zone $client_ip zone=r:64k rate=1r/s; limit_conn_zone $client_ip zone=c:64k;",
    );
    assert_eq!(z.req_zone("r").map(|z| z.capacity()), Some(512));
    assert_eq!(z.conn_zone("c").map(|z| z.capacity()), Some(1024));
}

#[test]
fn a_size_that_holds_no_state_is_an_error() {
    for (text, column) in [
        ("limit_req_zone $client_ip zone=r:127 rate=1r/s;", 1),
        ("limit_conn_zone $client_ip   zone=c:63;", 1),
    ] {
        let err = NginxConfig::parse(&format!("# small\n{text}")).expect_err(text);
        assert_eq!(err.kind(), &ConfigErrorKind::ZoneSize, "{text}");
        assert_eq!(
            (err.line(), err.column()),
            (Some(2), Some(column)),
            "{text}"
        );
    }
}

#[test]
fn a_long_key_uses_no_more_memory_than_a_short_one() {
    let policy = req_policy(
        "limit_req_zone $http_x_key zone=k:64k rate=1r/s;",
        "limit_req zone=k;",
    );
    let zone = policy.zones().next().cloned().expect("zone");
    let before = zone.memory_bytes();
    let _ = policy.check(&from("192.0.2.1").with_header("x-key", "a"), T0);
    let _ = policy.check(
        &from("192.0.2.1").with_header("x-key", "b".repeat(1 << 20)),
        T0,
    );
    assert_eq!((zone.len(), zone.memory_bytes()), (2, before));
}

#[test]
fn a_key_that_comes_out_empty_is_not_counted() {
    let policy = req_policy(
        "limit_req_zone $http_x_tenant zone=t:1m rate=1r/s;",
        "limit_req zone=t;",
    );
    let no_header = from("192.0.2.1");
    for _ in 0..3 {
        assert_eq!(policy.check(&no_header, T0).status(), None);
    }
    assert!(policy.zones().all(|z| z.is_empty()));
    let conn = conn_policy(
        "limit_conn_zone $http_x_tenant zone=t:1m;",
        "limit_conn t 1;",
    );
    let held = conn.acquire(&no_header);
    assert_eq!((held.status(), held.into_permit().is_empty()), (None, true));
}

#[test]
fn literal_text_keeps_a_key_non_empty_when_the_header_is_missing() {
    let policy = req_policy(
        "limit_req_zone $http_x_tenant- zone=t:1m rate=1r/s;",
        "limit_req zone=t;",
    );
    let no_header = from("192.0.2.1");
    assert_eq!(policy.check(&no_header, T0).status(), Some(Passed));
    assert_eq!(
        policy.check(&from("192.0.2.2"), T0).status(),
        Some(Rejected),
        "both share the key \"-\""
    );
}

#[test]
fn host_and_path_are_normalized_in_keys() {
    let policy = req_policy(
        "limit_req_zone $host$path zone=p:1m rate=1r/s;",
        "limit_req zone=p;",
    );
    let a = from("192.0.2.1")
        .with_host("Example.COM:443")
        .with_path("/a/../Login");
    let b = from("192.0.2.2")
        .with_host("example.com")
        .with_path("/%4Cogin");
    assert_eq!(policy.check(&a, T0).status(), Some(Passed));
    assert_eq!(policy.check(&b, T0).status(), Some(Rejected));
    let c = from("192.0.2.2")
        .with_host("example.com")
        .with_path("/login");
    assert_eq!(policy.check(&c, T0).status(), Some(Passed), "case is kept");
}

#[test]
fn credential_headers_are_refused_in_a_key_at_their_line() {
    let err = NginxConfig::parse("\nlimit_conn_zone $http_cookie zone=c:1m;").expect_err("cookie");
    assert_eq!(err.kind(), &ConfigErrorKind::CredentialInKey);
    assert_eq!(
        (err.line(), err.column(), err.directive()),
        (Some(2), Some(17), Some("limit_conn_zone"))
    );
    let options = ratelimit_nginx::ParseOptions::default().with_redact_header("x-session");
    let err = NginxConfig::parse_with("limit_conn_zone $http_x_session zone=c:1m;", &options)
        .expect_err("redacted");
    assert_eq!(err.kind(), &ConfigErrorKind::CredentialInKey);
}

#[test]
fn a_reload_keeps_the_counts_of_a_zone_with_the_same_name_and_size() {
    let registry = ZoneRegistry::new();
    let level = Level::parse("limit_req zone=one;").expect("level");
    let load = |text: &str| {
        let zones = registry
            .load(&NginxConfig::parse(text).expect("config"))
            .expect("load");
        zones.limit_req(&level).expect("policy")
    };
    let v1 = "limit_req_zone $client_ip zone=one:1m rate=1r/s;";
    let ip = from("192.0.2.1");
    let _ = load(v1).check(&ip, T0);
    assert_eq!(
        load(v1).check(&ip, T0).status(),
        Some(Rejected),
        "same zone: the count is kept"
    );
    assert_eq!(
        load("limit_req_zone $client_ip zone=one:2m rate=1r/s;")
            .check(&ip, T0)
            .status(),
        Some(Passed)
    );
    assert_eq!(
        load("limit_req_zone $host zone=one:2m rate=1r/s;")
            .check(&ip, T0)
            .status(),
        Some(Passed)
    );
    assert_eq!(
        load("limit_req_zone $host zone=one:2m rate=2r/s;")
            .check(&ip, T0)
            .status(),
        Some(Passed)
    );
    let kept = load("limit_req_zone $host zone=one:2m rate=2r/s;");
    assert_eq!(kept.check(&ip, T0).status(), Some(Rejected));
}

#[test]
fn a_reload_drops_zones_that_are_gone_and_keeps_them_for_requests_in_progress() {
    let registry = ZoneRegistry::new();
    let with = NginxConfig::parse("limit_conn_zone $client_ip zone=c:1m;").expect("config");
    let zones = registry.load(&with).expect("load");
    let policy = zones
        .limit_conn(&Level::parse("limit_conn c 1;").expect("level"))
        .expect("policy");
    let held = policy.acquire(&from("192.0.2.1")).into_permit();
    let zone = Arc::clone(zones.conn_zone("c").expect("zone"));
    let without = registry.load(&NginxConfig::default()).expect("load");
    assert!(without.conn_zone("c").is_none());
    drop(held);
    assert!(zone.is_empty(), "the old zone got its count back");
    let again = registry.load(&with).expect("load");
    assert!(
        !Arc::ptr_eq(again.conn_zone("c").expect("zone"), &zone),
        "a dropped zone starts fresh"
    );
}

#[test]
fn the_global_registry_is_one_per_process() {
    assert!(std::ptr::eq(ZoneRegistry::global(), ZoneRegistry::global()));
}

#[test]
fn levels_inherit_the_top_level_settings_of_the_loaded_configuration() {
    let z = zones("limit_req_zone $client_ip zone=one:1m rate=1r/s; limit_req_status 429;");
    let policy = z
        .limit_req(&Level::parse("limit_req zone=one;").expect("level"))
        .expect("policy");
    assert_eq!(policy.status_code(), 429);
    let err = z
        .limit_req(&Level::parse("\n limit_req zone=two;").expect("level"))
        .expect_err("unknown");
    assert_eq!(
        (err.kind(), err.line(), err.column()),
        (&ConfigErrorKind::UnknownZone, Some(2), Some(2))
    );
}
