//! The client address behind proxies, through axum over real TCP (the peer
//! is always 127.0.0.1): forwarding headers are read from the right, and
//! only when the peer is trusted.

mod support;

use axum::routing::get;
use axum::Router;
use ratelimit_tower::{Cidr, ForwardedHeader, RateLimitLayer, TrustedProxies};
use support::*;

/// One request per minute per client IP.
const ONE_PER_IP: &str = r#"[{"id": "per-ip", "expression": "true",
    "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]}]"#;

async fn server(proxies: TrustedProxies) -> std::net::SocketAddr {
    let clock = clock();
    let layer: RateLimitLayer = layer(ONE_PER_IP, &clock).trusted_proxies(proxies);
    serve_axum(Router::new().route("/", get(ok)).layer(layer)).await
}

async fn status(addr: std::net::SocketAddr, xff: &str) -> u16 {
    hit_with(addr, "/", &[("x-forwarded-for", xff)])
        .await
        .status
        .as_u16()
}

fn cidrs(list: &[&str]) -> TrustedProxies {
    TrustedProxies::cidrs(list.iter().map(|s| s.parse::<Cidr>().unwrap()))
}

#[tokio::test]
async fn a_client_sent_forwarded_for_without_trusted_proxy_is_ignored() {
    let addr = server(TrustedProxies::none()).await;
    assert_eq!(status(addr, "203.0.113.1").await, 200);
    // Another claimed address is still the same peer: 127.0.0.1.
    assert_eq!(status(addr, "203.0.113.2").await, 429);
    assert_eq!(status(addr, "198.51.100.1, 203.0.113.3").await, 429);
}

#[tokio::test]
async fn with_one_trusted_hop_the_rightmost_entry_is_the_client() {
    let addr = server(TrustedProxies::hops(1)).await;
    assert_eq!(status(addr, "6.6.6.6, 203.0.113.1").await, 200);
    // A different spoofed left part does not make a new client.
    assert_eq!(status(addr, "7.7.7.7, 203.0.113.1").await, 429);
    assert_eq!(status(addr, "203.0.113.1").await, 429);
    // The rightmost entry is what counts.
    assert_eq!(status(addr, "6.6.6.6, 203.0.113.2").await, 200);
    // Several header lines form one list.
    let r = hit_with(
        addr,
        "/",
        &[
            ("x-forwarded-for", "203.0.113.3"),
            ("x-forwarded-for", "203.0.113.2"),
        ],
    )
    .await;
    assert_eq!(r.status, 429);
}

#[tokio::test]
async fn with_two_hops_the_second_entry_from_the_right_is_the_client() {
    let addr = server(TrustedProxies::hops(2)).await;
    assert_eq!(status(addr, "6.6.6.6, 203.0.113.1, 10.0.0.1").await, 200);
    assert_eq!(status(addr, "203.0.113.1, 10.0.0.2").await, 429);
}

#[tokio::test]
async fn with_trusted_cidrs_trusted_entries_are_skipped_from_the_right() {
    let addr = server(cidrs(&["127.0.0.0/8", "10.0.0.0/8"])).await;
    assert_eq!(status(addr, "203.0.113.9, 10.0.0.5").await, 200);
    // Spoofed entries left of the client change nothing.
    assert_eq!(status(addr, "1.1.1.1, 203.0.113.9, 10.0.0.5").await, 429);
    assert_eq!(status(addr, "203.0.113.9, 10.7.7.7, 10.0.0.5").await, 429);
    assert_eq!(status(addr, "203.0.113.10").await, 200);
}

#[tokio::test]
async fn an_untrusted_peer_cannot_set_the_client_address() {
    // The peer, 127.0.0.1, is not among the trusted ranges.
    let addr = server(cidrs(&["10.0.0.0/8"])).await;
    assert_eq!(status(addr, "203.0.113.9").await, 200);
    assert_eq!(status(addr, "203.0.113.10").await, 429);
}

#[tokio::test]
async fn rfc7239_forwarded_is_read_the_same_way() {
    let proxies = TrustedProxies::hops(1).header(ForwardedHeader::Forwarded);
    let addr = server(proxies).await;
    let fwd = |v: &'static str| [("forwarded", v)];
    let r = hit_with(
        addr,
        "/",
        &fwd(r#"for=6.6.6.6, for="[2001:db8::1]:4711";proto=https"#),
    )
    .await;
    assert_eq!(r.status, 200);
    // The same /64, from the right.
    let r = hit_with(addr, "/", &fwd(r#"for=7.7.7.7;by=x, For="[2001:db8::2]""#)).await;
    assert_eq!(r.status, 429);
    // X-Forwarded-For is not read when Forwarded is configured.
    let r = hit_with(addr, "/", &[("x-forwarded-for", "203.0.113.50")]).await;
    assert_eq!(r.status, 200, "keyed on the peer");
}

#[tokio::test]
async fn garbage_entries_fall_back_to_the_nearest_trusted_hop() {
    let addr = server(TrustedProxies::hops(1)).await;
    for junk in [
        "unknown",
        "_hidden",
        "[::1",
        "\"",
        "999.999.999.999",
        "203.0.113.1:99999999999999999999",
        ",,,,",
        "203.0.113.1, ",
    ] {
        let r = hit_with(addr, "/", &[("x-forwarded-for", junk)]).await;
        assert!(r.status == 200 || r.status == 429, "{junk}: {}", r.status);
    }
    // Every unreadable chain was keyed on the peer: one bucket, spent.
    assert_eq!(status(addr, "unknown").await, 429);
    // The trailing empty entry is skipped: 203.0.113.1 was the client.
    assert_eq!(status(addr, "203.0.113.1").await, 429);
    assert_eq!(status(addr, "203.0.113.2").await, 200);
}
