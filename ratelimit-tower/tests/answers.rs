//! Each answer's status, headers and body, through axum over real TCP.

mod support;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use ratelimit_core::{Limiter, Outcome, Verdict};
use ratelimit_tower::{MakeResponse, RateLimitLayer};
use support::*;

const LOGIN: &str = r#"[{
    "id": "login",
    "expression": "http.request.uri.path eq \"/login\"",
    "algorithm": "sliding_window", "limit": 5, "period": "1m",
    "key": ["ip"], "penalty": "5m", "ratelimit_headers": true
}]"#;

fn app<M>(layer: RateLimitLayer<M>) -> Router
where
    M: MakeResponse + Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/login", get(ok))
        .route("/other", get(ok))
        .layer(layer)
}

#[tokio::test]
async fn allowed_answers_carry_ratelimit_headers() {
    let clock = clock();
    let addr = serve_axum(app(layer(LOGIN, &clock))).await;
    for left in (0..5).rev() {
        let r = hit(addr, "/login").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, "ok");
        assert_eq!(r.header("ratelimit-policy"), Some(r#""login";q=5;w=60"#));
        let current = r.header("ratelimit").unwrap();
        assert!(
            current.starts_with(&format!(r#""login";r={left};t="#)),
            "{current}"
        );
        assert_eq!(r.header("retry-after"), None);
        assert_eq!(
            r.header("x-ratelimit-limit"),
            None,
            "legacy headers are off"
        );
    }
    // A path no rule matches gets no headers.
    let r = hit(addr, "/other").await;
    assert_eq!((r.status.as_u16(), r.header("ratelimit")), (200, None));
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after_and_a_json_body() {
    let clock = clock();
    let addr = serve_axum(app(layer(LOGIN, &clock))).await;
    assert_eq!(statuses(addr, "/login", 5).await, [200; 5]);
    let r = hit(addr, "/login").await;
    assert_eq!(r.status, 429);
    // The penalty (5m) starts on the first refusal.
    assert_eq!(r.header("retry-after"), Some("300"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, r#"{"error":"rate_limited","retry_after":300}"#);
    assert_eq!(r.header("ratelimit-policy"), Some(r#""login";q=5;w=60"#));
    assert!(r
        .header("ratelimit")
        .unwrap()
        .starts_with(r#""login";r=0;"#));
}

#[tokio::test]
async fn a_penalty_counts_down_as_in_the_seed() {
    let clock = clock();
    let addr = serve_axum(app(layer(LOGIN, &clock))).await;
    assert_eq!(statuses(addr, "/login", 5).await, [200; 5]);
    assert_eq!(hit(addr, "/login").await.header("retry-after"), Some("300"));
    advance(&clock, 65);
    let r = hit(addr, "/login").await;
    assert_eq!(
        (r.status.as_u16(), r.header("retry-after")),
        (429, Some("235"))
    );
    advance(&clock, 234);
    assert_eq!(hit(addr, "/login").await.header("retry-after"), Some("1"));
    advance(&clock, 1);
    assert_eq!(
        hit(addr, "/login").await.status,
        200,
        "now = {}",
        clock_now(&clock)
    );
}

fn clock_now(clock: &ratelimit_core::ManualClock) -> u64 {
    use ratelimit_core::Clock;
    clock.now_ms()
}

#[tokio::test]
async fn a_closed_rule_without_backend_is_503_with_retry_after_1() {
    let json = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["ip"], "fail_mode": "closed"}]"#;
    let limiter = Limiter::builder(rules(json)).backend(DownBackend).build();
    let addr = serve_axum(app(RateLimitLayer::new(limiter))).await;
    let r = hit(addr, "/other").await;
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, r#"{"error":"unavailable"}"#);
}

#[tokio::test]
async fn an_open_rule_without_backend_lets_requests_through() {
    let json = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"]}]"#;
    let limiter = Limiter::builder(rules(json)).backend(DownBackend).build();
    let addr = serve_axum(app(RateLimitLayer::new(limiter))).await;
    assert_eq!(statuses(addr, "/other", 3).await, [200; 3]);
}

#[tokio::test]
async fn a_rejected_missing_key_is_400() {
    let json = r#"[{"id": "keyed", "expression": "true", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["ip", "header:x-api-key"],
        "on_missing_key": "reject"}]"#;
    let clock = clock();
    let addr = serve_axum(app(layer(json, &clock))).await;
    let r = hit(addr, "/other").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.header("retry-after"), None);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, r#"{"error":"bad_request"}"#);
    let r = hit_with(addr, "/other", &[("x-api-key", "k1")]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_custom_response_keeps_the_rate_limit_headers() {
    let clock = clock();
    let layer = layer(LOGIN, &clock).make_response(|v: &Verdict| {
        assert_eq!(v.outcome, Outcome::Limited);
        http::Response::builder()
            .status(429)
            .header("content-type", "text/plain")
            .body(Bytes::from_static(b"slow down"))
            .unwrap()
    });
    let addr = serve_axum(app(layer)).await;
    statuses(addr, "/login", 5).await;
    let r = hit(addr, "/login").await;
    assert_eq!((r.status.as_u16(), r.body.as_str()), (429, "slow down"));
    assert_eq!(r.header("content-type"), Some("text/plain"));
    assert_eq!(r.header("retry-after"), Some("300"), "added when missing");
    assert_eq!(r.header("ratelimit-policy"), Some(r#""login";q=5;w=60"#));
}

#[tokio::test]
async fn legacy_headers_come_from_the_most_restrictive_rule() {
    let json = r#"[
        {"id": "wide", "expression": "true", "algorithm": "fixed_window",
         "limit": 100, "period": "1h", "key": ["ip"], "ratelimit_headers": true},
        {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
         "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"],
         "ratelimit_headers": true}
    ]"#;
    let clock = clock();
    let addr = serve_axum(app(layer(json, &clock).legacy_headers(true))).await;
    let r = hit(addr, "/login").await;
    assert_eq!(
        r.header("ratelimit-policy"),
        Some(r#""wide";q=100;w=3600, "login";q=3;w=60"#)
    );
    assert_eq!(r.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("2"));
    let reset = (support::T0 / 1000 + 60).to_string();
    assert_eq!(r.header("x-ratelimit-reset"), Some(reset.as_str()));
    let r = hit(addr, "/other").await;
    assert_eq!(r.header("x-ratelimit-limit"), Some("100"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("98"));
}

#[tokio::test]
async fn log_rules_never_block_and_send_no_headers() {
    let json = r#"[{"id": "shadow", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"], "action": "log",
        "ratelimit_headers": true}]"#;
    let clock = clock();
    let layer = layer(json, &clock);
    let limiter = layer.limiter().clone();
    let addr = serve_axum(app(layer)).await;
    for _ in 0..3 {
        let r = hit(addr, "/other").await;
        assert_eq!((r.status.as_u16(), r.header("ratelimit")), (200, None));
    }
    let stats = limiter.rule_stats("shadow").unwrap();
    assert_eq!(stats.would_limit(), 2);
}
