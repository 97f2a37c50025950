//! gRPC calls through the layer over loopback TCP (a real tonic server and
//! client): the peer read from tonic's `TcpConnectInfo`, every answer of
//! the layer as a trailers-only gRPC status with its metadata.

use std::time::Duration;

use ratelimit_tests::support::grpc::*;
use ratelimit_tower::grpc::LimitedCode;
use ratelimit_tower::{RateLimitLayer, TrustedProxies};
use tonic::Code;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

const THREE_PER_MINUTE: &str = r#"[{"id": "per-ip", "expression": "true",
    "algorithm": "token_bucket", "limit": 3, "burst": 3, "period": "1m",
    "key": ["ip"], "ratelimit_headers": true}]"#;

fn layer(json: &str) -> RateLimitLayer {
    RateLimitLayer::from_json_str(json).expect("rules")
}

#[tokio::test]
async fn the_fourth_call_is_resource_exhausted_with_pushback_and_retry_info() {
    let addr = serve_grpc(layer(THREE_PER_MINUTE)).await;
    let mut health = HealthClient::new(channel(addr).await);
    for call in 1..=3 {
        let res = health.check(check_request("")).await;
        let res = res.unwrap_or_else(|e| panic!("call {call}: {e:?}"));
        let remaining = format!("\"per-ip\";r={};", 3 - call);
        let ratelimit = res.metadata().get("ratelimit").expect("ratelimit");
        assert!(
            ratelimit.to_str().unwrap().starts_with(&remaining),
            "{ratelimit:?}"
        );
    }
    let err = health.check(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    assert_eq!(err.message(), "rate limited");
    let md = err.metadata();
    let pushback = md.get("grpc-retry-pushback-ms").expect("pushback");
    let pushback: u64 = pushback.to_str().unwrap().parse().unwrap();
    // One token back every 20 s.
    assert!((19_000..=20_000).contains(&pushback), "{pushback}");
    assert_eq!(md.get("retry-after").unwrap(), "20");
    assert_eq!(md.get("ratelimit-policy").unwrap(), "\"per-ip\";q=3;w=60");
    assert!(md.get("ratelimit").is_some());
    let info = err
        .get_details_retry_info()
        .expect("RetryInfo in grpc-status-details-bin");
    assert_eq!(info.retry_delay, Some(Duration::from_millis(pushback)));
}

#[tokio::test]
async fn a_limited_call_can_answer_unavailable_instead() {
    let layer = layer(THREE_PER_MINUTE).grpc_limited_code(LimitedCode::Unavailable);
    let addr = serve_grpc(layer).await;
    let mut health = HealthClient::new(channel(addr).await);
    for _ in 0..3 {
        health.check(check_request("")).await.expect("allowed");
    }
    let err = health.check(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::Unavailable, "{err:?}");
    assert!(err.metadata().get("grpc-retry-pushback-ms").is_some());
}

#[tokio::test]
async fn a_server_without_a_peer_address_answers_internal_naming_the_fix() {
    let addr = serve_grpc_without_address(layer(THREE_PER_MINUTE)).await;
    let mut health = HealthClient::new(channel(addr).await);
    for _ in 0..2 {
        let err = health.check(check_request("")).await.unwrap_err();
        assert_eq!(err.code(), Code::Internal, "{err:?}");
        let message = err.message();
        assert!(message.contains("`tonic` feature"), "{message}");
        assert!(message.contains("SetClientIpLayer"), "{message}");
        assert!(err.metadata().get("grpc-retry-pushback-ms").is_none());
    }
}

#[tokio::test]
async fn a_missing_key_under_reject_is_invalid_argument() {
    let rules = r#"[{"id": "tenant", "expression": "true", "algorithm": "fixed_window",
        "limit": 10, "period": "1m", "key": ["ip", "header:x-tenant"],
        "on_missing_key": "reject"}]"#;
    let addr = serve_grpc(layer(rules)).await;
    let mut health = HealthClient::new(channel(addr).await);
    let err = health.check(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("missing"), "{}", err.message());
    let mut req = tonic::Request::new(check_request(""));
    req.metadata_mut()
        .insert("x-tenant", "acme".parse().unwrap());
    health.check(req).await.expect("keyed: allowed");
}

#[tokio::test]
async fn metadata_too_large_for_the_rules_is_invalid_argument() {
    let rules = r#"[{"id": "agents", "expression": "http.user_agent contains \"bot\"",
        "algorithm": "fixed_window", "limit": 10, "period": "1m", "key": ["ip"]}]"#;
    let addr = serve_grpc(layer(rules)).await;
    let mut health = HealthClient::new(channel(addr).await);
    let mut req = tonic::Request::new(check_request(""));
    let huge = "b".repeat(10_000);
    req.metadata_mut()
        .insert("user-agent", huge.parse().unwrap());
    let err = health.check(req).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("too large"), "{}", err.message());
}

#[tokio::test]
async fn a_rule_on_grpc_method_limits_that_method_only() {
    let rules = r#"[{"id": "checks",
        "expression": "grpc.service eq \"grpc.health.v1.Health\" and grpc.method eq \"Check\"",
        "algorithm": "token_bucket", "limit": 1, "burst": 1, "period": "1m", "key": ["ip"]}]"#;
    let addr = serve_grpc(layer(rules)).await;
    let mut health = HealthClient::new(channel(addr).await);
    health
        .check(check_request(""))
        .await
        .expect("the one Check");
    let err = health.check(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    for _ in 0..3 {
        health
            .watch(check_request(""))
            .await
            .expect("Watch is another method");
    }
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_keyed() {
    let one = r#"[{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
        "limit": 1, "burst": 1, "period": "1m", "key": ["ip"]}]"#;
    let loopback = "127.0.0.1/32".parse().expect("cidr");
    let layer = layer(one).trusted_proxies(TrustedProxies::cidrs([loopback]));
    let mut health = HealthClient::new(channel(serve_grpc(layer).await).await);
    let from = |client: &'static str| {
        let mut req = tonic::Request::new(check_request(""));
        req.metadata_mut()
            .insert("x-forwarded-for", client.parse().unwrap());
        req
    };
    health
        .check(from("203.0.113.5"))
        .await
        .expect("first client");
    let err = health.check(from("203.0.113.5")).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    health
        .check(from("203.0.113.6"))
        .await
        .expect("another client, its own budget");
    // The proxy's own calls are keyed on the proxy.
    health
        .check(check_request(""))
        .await
        .expect("the proxy itself");
}
