//! Hot reload through the shared limiter, and the emergency switches.

mod support;

use axum::routing::get;
use axum::Router;
use ratelimit_tower::RateLimitLayer;
use support::*;

fn api(limit: u64, algorithm: &str, period: &str) -> String {
    format!(
        r#"[{{"id": "api", "expression": "true", "algorithm": "{algorithm}",
        "limit": {limit}, "period": "{period}", "key": ["ip"], "ratelimit_headers": true}}]"#
    )
}

async fn server(layer: &RateLimitLayer) -> std::net::SocketAddr {
    serve_axum(Router::new().route("/", get(ok)).layer(layer.clone())).await
}

#[tokio::test]
async fn a_new_limit_keeps_the_counts_of_the_same_rule() {
    let clock = clock();
    let layer = layer(&api(5, "fixed_window", "1m"), &clock);
    let addr = server(&layer).await;
    assert_eq!(statuses(addr, "/", 3).await, [200; 3]);
    // Same id, algorithm and period; a lower limit. Published on a clone of
    // the layer's limiter, while the server runs.
    let limiter = layer.limiter().clone();
    limiter.publish(rules(&api(4, "fixed_window", "1m")));
    let r = hit(addr, "/").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("ratelimit-policy"), Some(r#""api";q=4;w=60"#));
    assert!(r.header("ratelimit").unwrap().starts_with(r#""api";r=0;"#));
    assert_eq!(hit(addr, "/").await.status, 429, "4 counted of 4");
    // Rule stats carry over too.
    let stats = limiter.rule_stats("api").unwrap();
    assert_eq!((stats.allowed(), stats.limited()), (4, 1));
}

#[tokio::test]
async fn a_changed_period_or_algorithm_starts_fresh() {
    let clock = clock();
    let layer = layer(&api(2, "fixed_window", "1m"), &clock);
    let addr = server(&layer).await;
    assert_eq!(statuses(addr, "/", 3).await, [200, 200, 429]);
    layer
        .limiter()
        .publish(rules(&api(2, "fixed_window", "2m")));
    assert_eq!(statuses(addr, "/", 3).await, [200, 200, 429]);
    layer
        .limiter()
        .publish(rules(&api(2, "sliding_window", "2m")));
    assert_eq!(statuses(addr, "/", 3).await, [200, 200, 429]);
}

#[tokio::test]
async fn a_removed_rule_stops_limiting() {
    let clock = clock();
    let layer = layer(&api(1, "fixed_window", "1m"), &clock);
    let addr = server(&layer).await;
    assert_eq!(statuses(addr, "/", 2).await, [200, 429]);
    layer.limiter().publish(rules("[]"));
    let r = hit(addr, "/").await;
    assert_eq!((r.status.as_u16(), r.header("ratelimit")), (200, None));
}

#[tokio::test]
async fn disabling_rate_limiting_lets_everything_through() {
    let json = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"], "penalty": "1h"}]"#;
    let clock = clock();
    let layer = layer(json, &clock);
    let addr = server(&layer).await;
    assert_eq!(statuses(addr, "/", 2).await, [200, 429]);
    layer.limiter().switches().set_disable_rate_limiting(true);
    // Over the limit and under a penalty, yet everything passes.
    assert_eq!(statuses(addr, "/", 5).await, [200; 5]);
    let stats = layer.limiter().rule_stats("api").unwrap();
    assert!(stats.would_limit() >= 5);
    layer.limiter().switches().set_disable_rate_limiting(false);
    assert_eq!(hit(addr, "/").await.status, 429);
}

#[tokio::test]
async fn disabling_config_blocking_turns_rules_into_log() {
    let clock = clock();
    let layer = layer(&api(1, "fixed_window", "1m"), &clock);
    let addr = server(&layer).await;
    layer.limiter().switches().set_disable_config_blocking(true);
    let r = hit(addr, "/").await;
    assert_eq!(
        (r.status.as_u16(), r.header("ratelimit")),
        (200, None),
        "log rules send no headers"
    );
    assert_eq!(statuses(addr, "/", 3).await, [200; 3]);
}
