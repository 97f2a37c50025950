//! Per-route limits with `Router::route_layer`, and a key the layer derives
//! from each request.
//!
//! - `/search`: 5 requests per minute per client IP, in one line
//!   (`RateLimitLayer::per_ip_per_minute`).
//! - `/api/report`: 3 requests per minute per *tenant*, whatever the IP:
//!   the tenant is the part of the `x-api-key` header before the first '.'
//!   (`acme.k1` and `acme.k2` are both tenant `acme`), derived by a closure
//!   given to `RateLimitLayer::key_part` and keyed on as `app:tenant`. A
//!   request without a tenant is refused with 400 (`on_missing_key:
//!   reject`). The tenant comes from a header the client chooses, so a
//!   per-IP rule backs it up.
//! - `/health`: not limited.
//!
//! `route_layer` wraps the routes added *before* it, so each limited route
//! is a router of its own, merged into the app.
//!
//! ```text
//! cargo run --example per_route       # listens on 127.0.0.1:3002 (PORT to change)
//! ```
//!
//! It prints curl commands to try.
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;

use axum::routing::get;
use axum::Router;
use ratelimit_tower::{RateLimitLayer, RequestHead};

const REPORT_RULES: &str = r#"[
  {"id": "report-per-ip", "expression": "true", "algorithm": "sliding_window",
   "limit": 30, "period": "1m", "key": ["ip"]},
  {"id": "report-per-tenant", "expression": "true", "algorithm": "sliding_window",
   "limit": 3, "period": "1m", "key": ["app:tenant"], "on_missing_key": "reject",
   "ratelimit_headers": true}
]"#;

/// The tenant of a request: the API key's part before the first '.'.
fn tenant(req: &RequestHead<'_>) -> Option<String> {
    let key = req.headers().get("x-api-key")?.to_str().ok()?;
    let (tenant, _) = key.split_once('.')?;
    (!tenant.is_empty()).then(|| tenant.to_owned())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let search = Router::new()
        .route("/search", get(|| async { "results\n" }))
        .route_layer(RateLimitLayer::per_ip_per_minute(5));

    let report = Router::new()
        .route("/api/report", get(|| async { "report\n" }))
        .route_layer(RateLimitLayer::from_json_str(REPORT_RULES)?.key_part("tenant", tenant));

    let app = Router::new()
        .merge(search)
        .merge(report)
        .route("/health", get(|| async { "ok\n" }));

    let port = std::env::var("PORT").unwrap_or_else(|_| "3002".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!("try:");
    println!("  for i in 1 2 3 4 5 6; do curl -s -o /dev/null -w '%{{http_code}}\\n' {addr}/search; done");
    println!("      # 5 x 200, then 429 (5 per minute per IP)");
    println!("  curl -i -H 'x-api-key: acme.k1' {addr}/api/report");
    println!("  curl -i -H 'x-api-key: acme.k2' {addr}/api/report");
    println!("  curl -i -H 'x-api-key: acme.k3' {addr}/api/report");
    println!("  curl -i -H 'x-api-key: acme.k4' {addr}/api/report    # 429: tenant acme had 3");
    println!("  curl -i -H 'x-api-key: globex.k1' {addr}/api/report  # 200: another tenant");
    println!("  curl -i {addr}/api/report                            # 400: no tenant");
    println!("  curl -i {addr}/health                                # never limited");
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
