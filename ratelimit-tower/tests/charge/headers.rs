//! The `RateLimit` header of a `charge: response` rule: the request's probe
//! counts nothing, so `r` and `t` are the budget as the request found it
//! (issue 27.6), on the in-memory backend and on Valkey.

use std::sync::Arc;

use http::Request;
use http_body_util::BodyExt;
use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::{ClientIp, Limiter, ManualClock};
use ratelimit_tower::RateLimitLayer;
use tower::{Layer, ServiceExt};

use crate::support::{advance, clock, rules};

/// 10 a minute under each algorithm, charged after the response.
const RULES: &str = r#"[
  {"id": "bucket", "expression": "starts_with(http.request.uri.path, \"/tb\")",
   "algorithm": "token_bucket", "limit": 10, "period": "1m", "burst": 10, "key": ["ip"],
   "charge": "response", "ratelimit_headers": true},
  {"id": "window", "expression": "starts_with(http.request.uri.path, \"/sw\")",
   "algorithm": "sliding_window", "limit": 10, "period": "1m", "key": ["ip"],
   "charge": "response", "ratelimit_headers": true}
]"#;

/// Sends `uri` (the upstream charges `?head=N`), reads the body to its
/// end (the charge is awaited before it ends) and returns the `RateLimit`
/// header.
async fn header(limiter: &Limiter, uri: &str) -> String {
    let layer = RateLimitLayer::new(limiter.clone()).charge_before_end(true);
    let svc = layer.layer(tower::service_fn(crate::upstream));
    let mut req = Request::get(uri).body(String::new()).unwrap();
    req.extensions_mut()
        .insert(ClientIp("192.0.2.1".parse().unwrap()));
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200, "{uri}");
    let value = res.headers()["ratelimit"].to_str().unwrap().to_owned();
    res.into_body().collect().await.unwrap();
    value
}

async fn found_state_scenario(backend: Arc<dyn Backend>, clock: ManualClock) {
    let limiter = Limiter::builder(rules(RULES))
        .clock(clock.clone())
        .backend_arc(backend)
        .build();
    // A full bucket: 10 left, nothing to refill (a probe counted as one
    // request said t=6, the time one token takes).
    assert_eq!(header(&limiter, "/tb").await, r#""bucket";r=10;t=0"#);
    assert_eq!(header(&limiter, "/tb?head=4").await, r#""bucket";r=10;t=0"#);
    assert_eq!(header(&limiter, "/tb").await, r#""bucket";r=6;t=24"#);
    // A sliding window whose only count (3) is in the previous window: it
    // is gone when this window ends, in 60 s (not 120 s, which a count in
    // this window would take).
    assert_eq!(header(&limiter, "/sw?head=3").await, r#""window";r=10;t=0"#);
    advance(&clock, 60);
    assert_eq!(header(&limiter, "/sw").await, r#""window";r=7;t=60"#);
}

#[tokio::test]
async fn the_header_of_a_charged_rule_is_the_state_found_in_memory() {
    found_state_scenario(Arc::new(MemoryBackend::default()), clock()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_of_a_charged_rule_is_the_state_found_on_valkey() {
    let server = ratelimit_testkit::valkey::server();
    let backend = ratelimit_testkit::valkey::injected(server.url()).await;
    found_state_scenario(Arc::new(backend), clock()).await;
}
