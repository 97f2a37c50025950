//! `RateLimitLayer::for_axum` on an axum `Router`: the same answers as the
//! layer itself (statuses, headers, bodies, counted and charged responses),
//! with axum's body type.
#![cfg(feature = "axum")]

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::{Extension, Router};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use ratelimit_tower::{RateLimitLayer, ResponseCost};
use tower::ServiceExt;

mod support;

const RULES: &str = r#"[
  {"id": "per-ip", "expression": "http.request.uri.path eq \"/\"",
   "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"],
   "ratelimit_headers": true},
  {"id": "errors", "expression": "http.request.uri.path eq \"/missing\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"],
   "count_statuses": ["404"], "penalty": "1m"},
  {"id": "shadow", "expression": "true", "algorithm": "fixed_window",
   "limit": 1, "period": "1m", "key": ["ip"], "action": "log"},
  {"id": "costly", "expression": "http.request.uri.path eq \"/costly\"",
   "algorithm": "fixed_window", "limit": 10, "period": "1m", "key": ["ip"],
   "charge": "response"}]"#;

fn app(layer: RateLimitLayer, for_axum: bool) -> Router {
    let app = Router::new()
        .route("/", get(|| async { "hello" }))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "no such thing") }),
        )
        .route(
            "/costly",
            get(|| async { (Extension(ResponseCost(6)), "rows") }),
        );
    match for_axum {
        true => app.layer(layer.for_axum()),
        false => app.layer(layer),
    }
}

/// The layer over [`RULES`], charges awaited before each body ends (the
/// next request sees them).
fn limited() -> RateLimitLayer {
    support::layer(RULES, &support::clock()).charge_before_end(true)
}

/// Status, the headers that matter here, body and the would-limit ids.
type Answer = (
    StatusCode,
    Vec<(String, String)>,
    String,
    Option<Vec<String>>,
);

async fn send(app: &Router, path: &str, peer: Option<[u8; 4]>) -> Answer {
    let mut req = Request::builder().uri(path).header("host", "example.com");
    if let Some(ip) = peer {
        let addr = SocketAddr::from((ip, 40000));
        req = req.extension(ConnectInfo(addr));
    }
    let req = req.body(axum::body::Body::empty()).unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = [
        "ratelimit-policy",
        "ratelimit",
        "retry-after",
        "content-type",
    ]
    .iter()
    .filter_map(|name| {
        let value = res.headers().get(*name)?.to_str().ok()?;
        Some((name.to_string(), value.to_owned()))
    })
    .collect();
    let would = res
        .extensions()
        .get::<ratelimit_tower::WouldLimit>()
        .map(|w| w.0.clone());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        headers,
        String::from_utf8_lossy(&body).into_owned(),
        would,
    )
}

/// Every kind of answer, in an order where each one's counts matter to
/// the next.
async fn answers(app: &Router) -> Vec<Answer> {
    let peer = Some([192, 0, 2, 1]);
    let mut out = Vec::new();
    let paths = ["/", "/", "/", "/", "/missing", "/missing", "/missing"];
    for path in paths.into_iter().chain(["/costly", "/costly", "/costly"]) {
        out.push(send(app, path, peer).await);
    }
    // Another client: a URI too long, then no client address at all.
    let long = format!("/?q={}", "a".repeat(20 * 1024));
    out.push(send(app, &long, Some([192, 0, 2, 2])).await);
    out.push(send(app, "/", None).await);
    out
}

#[tokio::test]
async fn axum_bodies_answer_as_the_layer_does() {
    let plain = answers(&app(limited(), false)).await;
    let axum = answers(&app(limited(), true)).await;
    assert_eq!(plain, axum);
    // And they are the answers expected.
    let statuses: Vec<u16> = axum.iter().map(|a| a.0.as_u16()).collect();
    let want = [200, 200, 200, 429, 404, 404, 429, 200, 200, 429, 414, 500];
    assert_eq!(statuses, want);
    assert_eq!(axum[0].2, "hello");
    let policy = (
        "ratelimit-policy".to_owned(),
        "\"per-ip\";q=3;w=60".to_owned(),
    );
    assert_eq!(axum[0].1[0], policy);
    assert!(axum[3].2.contains("rate_limited"), "{:?}", axum[3]);
    assert_eq!(axum[1].3.as_deref(), Some(&["shadow".to_owned()][..]));
    assert_eq!(axum[7].2, "rows");
}

#[tokio::test]
async fn a_charged_body_charges_when_it_ends() {
    let app = app(limited(), true);
    let peer = Some([192, 0, 2, 3]);
    // 6 of 10 charged as the first body ends: the second (probe at cost
    // 1) passes, its 6 go over; the third is refused.
    assert_eq!(send(&app, "/costly", peer).await.0, StatusCode::OK);
    assert_eq!(send(&app, "/costly", peer).await.0, StatusCode::OK);
    assert_eq!(
        send(&app, "/costly", peer).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
}
