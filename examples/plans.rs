//! Limits per plan: free callers get 100 requests a minute, pro callers
//! 1,000, with rules that match on who the caller is (`rules/plans.json`).
//!
//! - The auth layer (a toy token table here; a real application verifies a
//!   signed JWT) inserts the caller's **verified claims** (`sub`, `plan`)
//!   and its **application values** (`tenant`) into the request, before
//!   the rate limit layer. Rules read them as
//!   `http.request.jwt.claims["plan"][0]` and `app.tenant`; a client's
//!   headers never become either.
//! - `plan-free`: 100 a minute per `sub`, except `svc-monitor`, on the
//!   rule's allow list.
//! - `plan-pro`: 1,000 a minute per `sub`, except tenant `bigcorp`, which
//!   has a contract of its own: `tenant-bigcorp`, 5,000 a minute for the
//!   whole tenant (a separate rule for one tenant).
//! - `anonymous` (no verified token): 10 a minute per IP.
//! - `per-ip`: a site-wide backstop of 6,000 a minute per IP, which the
//!   rule set requires beside a rule keyed on `app:` values alone (the
//!   application may derive them from what the client sends).
//!
//! With `VALKEY_URL` set (`redis://127.0.0.1:6379`) every instance shares
//! its counts through Valkey; otherwise it counts in memory.
//!
//! ```text
//! cargo run --example plans               # listens on 127.0.0.1:3003 (PORT to change)
//! curl -i -H 'authorization: Bearer free-token' localhost:3003/api
//! ```
//!
//! It prints more curl commands to try.
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::{AppValues, RateLimitLayer, VerifiedClaims};

/// The plans' rules.
const RULES: &str = include_str!("rules/plans.json");

/// The toy token table: token → (sub, plan, tenant).
const TOKENS: &[(&str, &str, &str, &str)] = &[
    ("free-token", "alice", "free", "alice-co"),
    ("pro-token", "bob", "pro", "bob-co"),
    ("bigcorp-token", "carol", "pro", "bigcorp"),
    ("monitor-token", "svc-monitor", "free", "ops"),
];

/// The auth layer: verifies the bearer token and inserts its claims and
/// the caller's tenant. It runs before (outside) the rate limit layer.
async fn auth(mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(&(_, sub, plan, tenant)) = TOKENS.iter().find(|t| Some(t.0) == token) {
        let ext = req.extensions_mut();
        ext.insert(VerifiedClaims::new([("sub", sub), ("plan", plan)]));
        ext.insert(AppValues::new([("tenant", tenant)]));
    }
    next.run(req).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let limiter = Limiter::builder(RuleSet::from_json(RULES)?)
        .backend_arc(ratelimit_examples::backend_from_env().await?)
        .build();
    let app = Router::new()
        .route("/api", get(|| async { "ok\n" }))
        .layer(RateLimitLayer::new(limiter).for_axum())
        // Added last, so it runs first: the claims are there for the limiter.
        .layer(middleware::from_fn(auth));

    let port = std::env::var("PORT").unwrap_or_else(|_| "3003".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!("try (the ratelimit header shows the rule and what is left):");
    println!("  curl -si -H 'authorization: Bearer free-token' {addr}/api | grep -i ratelimit");
    println!("      # \"plan-free\";q=100;w=60");
    println!("  curl -si -H 'authorization: Bearer pro-token' {addr}/api | grep -i ratelimit");
    println!("      # \"plan-pro\";q=1000;w=60");
    println!("  curl -si -H 'authorization: Bearer bigcorp-token' {addr}/api | grep -i ratelimit");
    println!("      # \"tenant-bigcorp\";q=5000;w=60: the tenant's own contract");
    println!("  curl -si -H 'authorization: Bearer monitor-token' {addr}/api | grep -i ratelimit");
    println!("      # nothing: svc-monitor is on plan-free's allow list");
    println!("  curl -si -H 'plan: pro' {addr}/api | grep -i ratelimit");
    println!("      # \"anonymous\";q=10;w=60: a header is not a claim");
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
