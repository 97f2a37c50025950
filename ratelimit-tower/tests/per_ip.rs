//! The one-line per-IP layers over axum.

mod support;

use std::net::IpAddr;

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use http::Request;
use ratelimit_tower::{ClientIp, RateLimitLayer};
use support::*;
use tower::ServiceExt;

async fn call(app: &Router, ip: &str) -> http::Response<Body> {
    let mut req = Request::get("/").body(Body::empty()).unwrap();
    let ip: IpAddr = ip.parse().unwrap();
    req.extensions_mut().insert(ClientIp(ip));
    app.clone().oneshot(req).await.unwrap()
}

#[tokio::test]
async fn per_ip_per_minute_limits_each_ip_to_its_burst() {
    let app = Router::new()
        .route("/", get(ok))
        .layer(RateLimitLayer::per_ip_per_minute(2));
    let first = call(&app, "192.0.2.1").await;
    assert_eq!(first.status(), 200);
    assert_eq!(
        first.headers()["ratelimit-policy"],
        "\"per-ip\";q=2;w=60",
        "one rule, per-ip, 2 per minute"
    );
    assert_eq!(call(&app, "192.0.2.1").await.status(), 200);
    let third = call(&app, "192.0.2.1").await;
    assert_eq!(third.status(), 429);
    let retry: u64 = third.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&retry),
        "one request refills in 30 s: {retry}"
    );
    assert_eq!(call(&app, "192.0.2.2").await.status(), 200, "another IP");
    assert_eq!(call(&app, "2001:db8::1").await.status(), 200);
}

#[tokio::test]
async fn per_ip_per_second_and_per_hour_build_their_quota() {
    for (layer, policy) in [
        (RateLimitLayer::per_ip_per_second(5), "\"per-ip\";q=5;w=1"),
        (
            RateLimitLayer::per_ip_per_hour(1000),
            "\"per-ip\";q=1000;w=3600",
        ),
    ] {
        let app = Router::new().route("/", get(ok)).layer(layer);
        let res = call(&app, "192.0.2.1").await;
        assert_eq!(res.headers()["ratelimit-policy"], policy);
    }
}

#[tokio::test]
async fn per_ip_over_tcp_with_connect_info() {
    let app = Router::new()
        .route("/", get(ok))
        .layer(RateLimitLayer::per_ip_per_hour(1));
    let addr = serve_axum(app).await;
    assert_eq!(statuses(addr, "/", 2).await, [200, 429]);
}
