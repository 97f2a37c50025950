//! A long-running axum API with rules from `examples/rules/api.json`.
//!
//! Shows: rules from a JSON file; per-user limits keyed on verified JWT
//! claims (`jwt_claim:sub`), which a toy auth layer inserts as
//! `VerifiedClaims` after looking the bearer token up in a static table;
//! counting 404s and 401s; an admin route with each rule's counters
//! (`limiter.rule_stats(id)`, with the subjects each rule limited most) and
//! the emergency switch; the running rules exported as JSON
//! (`RuleSet::to_json`). With `VALKEY_URL` set (`redis://127.0.0.1:6379`)
//! every instance shares its counts through Valkey; otherwise it counts in
//! memory.
//!
//! ```text
//! cargo run --example axum_api            # listens on 127.0.0.1:3000 (PORT to change)
//! curl -i -X POST localhost:3000/login    # 6th within a minute: 429
//! curl -i -H 'authorization: Bearer alice-token' localhost:3000/api/items
//! curl -s -H 'authorization: Bearer admin-token' localhost:3000/admin/rules
//! curl -s -H 'authorization: Bearer admin-token' localhost:3000/admin/rules.json
//! curl -s -X POST -H 'authorization: Bearer admin-token' localhost:3000/admin/kill-switch/on
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::SocketAddr;

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::{RateLimitLayer, VerifiedClaims};
use serde_json::json;

const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/api.json");

/// The toy token table: token → (sub, role). A real application verifies a
/// signed JWT here.
const TOKENS: &[(&str, &str, &str)] = &[
    ("alice-token", "alice", "user"),
    ("bob-token", "bob", "user"),
    ("admin-token", "root", "admin"),
];

/// The auth layer: verifies the bearer token and inserts its claims. It runs
/// before the rate limit layer; requests without a valid token go on without
/// claims (the routes decide whether that is allowed).
async fn auth(mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some((_, sub, role)) = TOKENS.iter().find(|(t, _, _)| Some(*t) == token) {
        let claims = VerifiedClaims::new([("sub", *sub), ("role", *role)]);
        req.extensions_mut().insert(claims);
    }
    next.run(req).await
}

fn claims_of(claims: &Option<Extension<VerifiedClaims>>) -> Option<&VerifiedClaims> {
    claims.as_ref().map(|Extension(c)| c)
}

async fn items(claims: Option<Extension<VerifiedClaims>>) -> Response {
    match claims_of(&claims).and_then(|c| c.get("sub")) {
        Some(sub) => Json(json!({"user": sub, "items": ["a", "b", "c"]})).into_response(),
        None => (StatusCode::UNAUTHORIZED, "token required\n").into_response(),
    }
}

fn is_admin(claims: &Option<Extension<VerifiedClaims>>) -> bool {
    claims_of(claims).and_then(|c| c.get("role")) == Some("admin")
}

fn stats_json(limiter: &Limiter, id: &str) -> Option<serde_json::Value> {
    let s = limiter.rule_stats(id)?;
    Some(json!({
        "id": id,
        "allowed": s.allowed(),
        "limited": s.limited(),
        "would_limit": s.would_limit(),
        "fail_open": s.fail_open(),
        "fail_closed": s.fail_closed(),
        "expired": s.expired(),
        "top_limited": s.top_limited().iter()
            .map(|(subject, n)| json!({"subject": subject.to_hex(), "count": n}))
            .collect::<Vec<_>>(),
    }))
}

async fn all_rules(
    State(limiter): State<Limiter>,
    claims: Option<Extension<VerifiedClaims>>,
) -> Response {
    if !is_admin(&claims) {
        return StatusCode::FORBIDDEN.into_response();
    }
    let rules = limiter.rules();
    let list: Vec<_> = rules
        .rules()
        .iter()
        .filter_map(|r| stats_json(&limiter, &r.id))
        .collect();
    Json(json!({"rules": list, "kill_switch": limiter.switches().rate_limiting_disabled()}))
        .into_response()
}

/// The running rules, as JSON that loads back (`RuleSet::to_json`).
async fn export_rules(
    State(limiter): State<Limiter>,
    claims: Option<Extension<VerifiedClaims>>,
) -> Response {
    if !is_admin(&claims) {
        return StatusCode::FORBIDDEN.into_response();
    }
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        limiter.rules().to_json(),
    )
        .into_response()
}

async fn one_rule(
    State(limiter): State<Limiter>,
    Path(id): Path<String>,
    claims: Option<Extension<VerifiedClaims>>,
) -> Response {
    if !is_admin(&claims) {
        return StatusCode::FORBIDDEN.into_response();
    }
    match stats_json(&limiter, &id) {
        Some(v) => Json(v).into_response(),
        None => (StatusCode::NOT_FOUND, "no such rule\n").into_response(),
    }
}

async fn kill_switch(
    State(limiter): State<Limiter>,
    Path(on): Path<String>,
    claims: Option<Extension<VerifiedClaims>>,
) -> Response {
    if !is_admin(&claims) {
        return StatusCode::FORBIDDEN.into_response();
    }
    let on = on == "on";
    limiter.switches().set_disable_rate_limiting(on);
    format!("rate limiting disabled: {on}\n").into_response()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let json = std::fs::read_to_string(RULES)?;
    let rules = RuleSet::from_json(&json)?;
    for w in rules.warnings() {
        println!("warning: {w}");
    }
    let limiter = Limiter::builder(rules)
        .backend_arc(ratelimit_examples::backend_from_env().await?)
        .build();
    let layer = RateLimitLayer::new(limiter.clone());

    let app = Router::new()
        .route("/login", post(|| async { "welcome\n" }))
        .route("/api/items", get(items))
        .route("/admin/rules", get(all_rules))
        .route("/admin/rules.json", get(export_rules))
        .route("/admin/rules/{id}", get(one_rule))
        .route("/admin/kill-switch/{on}", post(kill_switch))
        .with_state(limiter)
        .layer(layer.for_axum())
        // Outermost: verify tokens before rate limiting reads the claims.
        .layer(middleware::from_fn(auth));

    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!("rules: {RULES}");
    println!("try:");
    println!("  curl -i -X POST {addr}/login    # the 6th within a minute: 429");
    println!("  curl -i -H 'authorization: Bearer alice-token' {addr}/api/items");
    println!("  curl -s -H 'authorization: Bearer admin-token' {addr}/admin/rules");
    println!("  curl -s -H 'authorization: Bearer admin-token' {addr}/admin/rules.json");
    println!(
        "  curl -s -X POST -H 'authorization: Bearer admin-token' {addr}/admin/kill-switch/on"
    );
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
