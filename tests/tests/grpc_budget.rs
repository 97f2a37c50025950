//! One budget across transports: an HTTP route and a gRPC method under one
//! rule share one key and one count, on one instance (memory) and across
//! two instances on one Valkey; a unary gRPC call is charged its cost
//! after its response, as an HTTP request is.

use std::net::SocketAddr;

use axum::routing::get;
use axum::Router;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_testkit::valkey::spawned;
use ratelimit_tests::support::grpc::*;
use ratelimit_tests::support::http::{exchange, get as get_bytes, serve_axum};
use ratelimit_tests::support::unique;
use ratelimit_tower::RateLimitLayer;
use ratelimit_valkey::ValkeyBackend;
use tonic::Code;
use tonic_health::pb::health_client::HealthClient;

/// The pattern of the gRPC chapter: one rule whose expression names the
/// HTTP route and the gRPC method, keyed on the client address alone.
const ONE_BUDGET: &str = r#"[{"id": "status-checks",
    "expression": "http.request.uri.path in {\"/status\" \"/grpc.health.v1.Health/Check\"}",
    "algorithm": "token_bucket", "limit": 4, "burst": 4, "period": "1m",
    "key": ["ip"], "ratelimit_headers": true}]"#;

async fn http_status(addr: SocketAddr) -> (u16, String) {
    let res = exchange(addr, &get_bytes(b"/status", &[]))
        .await
        .expect("http");
    (res.status, String::from_utf8_lossy(&res.body).into_owned())
}

async fn http_server(layer: RateLimitLayer) -> SocketAddr {
    let app = Router::new()
        .route("/status", get(|| async { "up" }))
        .layer(layer);
    serve_axum(app).await
}

/// Alternates HTTP and gRPC calls from one client: four pass in all, then
/// both transports refuse, each in its own terms.
async fn alternate(http: SocketAddr, grpc: SocketAddr) {
    let mut health = HealthClient::new(channel(grpc).await);
    for round in 0..2 {
        let (status, body) = http_status(http).await;
        assert_eq!(status, 200, "round {round}: {body}");
        let res = health.check(check_request("")).await;
        res.unwrap_or_else(|e| panic!("round {round}: {e:?}"));
    }
    let (status, body) = http_status(http).await;
    assert_eq!(status, 429, "the fifth call, over HTTP: {body}");
    assert!(
        body.contains("rate_limited"),
        "HTTP keeps its JSON answer: {body}"
    );
    let err = health.check(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "the sixth, over gRPC");
}

#[tokio::test]
async fn http_and_grpc_calls_share_one_count_in_memory() {
    let layer = RateLimitLayer::from_json_str(ONE_BUDGET).expect("rules");
    let http = http_server(layer.clone()).await;
    let grpc = serve_grpc(layer).await;
    alternate(http, grpc).await;
}

#[tokio::test]
async fn http_and_grpc_calls_share_one_count_across_two_instances_on_valkey() {
    let server = spawned();
    let rules = RuleSet::from_json(ONE_BUDGET).expect("rules");
    let prefix = unique("grpc-budget");
    let mut layers = Vec::new();
    for _ in 0..2 {
        let backend = ValkeyBackend::builder(server.url())
            .key_prefix(&prefix)
            .build()
            .await
            .expect("backend");
        let limiter = Limiter::builder(rules.clone()).backend(backend).build();
        layers.push(RateLimitLayer::new(limiter));
    }
    let grpc = serve_grpc(layers.pop().expect("two")).await;
    let http = http_server(layers.pop().expect("two")).await;
    alternate(http, grpc).await;
}

#[tokio::test]
async fn a_unary_grpc_call_is_charged_its_cost_after_the_response() {
    let rules = r#"[{"id": "tokens", "expression": "http.request.uri.path eq \"/test.Extra/Complete\"",
        "algorithm": "token_bucket", "limit": 100, "burst": 100, "period": "1h",
        "key": ["ip"], "charge": "response"}]"#;
    let layer = RateLimitLayer::from_json_str(rules)
        .expect("rules")
        .charge_before_end(true);
    let ch = channel(serve_grpc(layer).await).await;
    // 60 + 60 tokens: the second call starts with 40 left and passes (its
    // cost is known only at its end), the third finds the budget spent.
    complete_call(&ch, 60).await.expect("first");
    complete_call(&ch, 60).await.expect("second");
    let err = complete_call(&ch, 1).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
}
