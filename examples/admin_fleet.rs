//! The admin page operating a fleet: run two (or more) of these against one
//! Valkey, behind any load balancer, and publish rules, canaries, switches
//! and lifts from either page.
//!
//! Shows: `ValkeyControl` (the control channel) and its follower keeping
//! this instance's limiter on what is published and reporting it to the
//! fleet's registry; `Admin::control` so every action of the page applies
//! fleet-wide (and its forms post back to any instance: the CSRF secret is
//! the fleet's); the rollback guard (`ratelimit_admin::guard::Guard`)
//! running on every instance (its publishes are compare-and-set, so
//! several guards are safe). Without `VALKEY_URL` it is one process on a
//! `MemoryControl`: the same page and workflow, no server. See
//! `docs/fleet.md`.
//!
//! ```text
//! VALKEY_URL=redis://127.0.0.1:6379 INSTANCE=edge-1 PORT=3001 cargo run -p ratelimit-examples --example admin_fleet
//! VALKEY_URL=redis://127.0.0.1:6379 INSTANCE=edge-2 PORT=3002 cargo run -p ratelimit-examples --example admin_fleet
//! # open http://127.0.0.1:3001/admin with Authorization: Bearer operator-token
//! curl -s -H 'x-client: crawler-7' 127.0.0.1:3002/api
//! ```
//!
//! Environment: `PORT` (3000), `INSTANCE` (`edge-1`), `VALKEY_URL`,
//! `ADMIN_TOKEN` (`operator-token`), `GUARD_EVERY_MS` (10000),
//! `GUARD_MIN_REQUESTS` (100), `GUARD_MARGIN_PERCENT` (50).
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use ratelimit_admin::guard::{Guard, GuardConfig};
use ratelimit_admin::Admin;
use ratelimit_core::control::{Control, MemoryControl};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::RateLimitLayer;
use ratelimit_valkey::control::{FollowConfig, ValkeyControl};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The operators' auth: a bearer token. A real application checks its
/// session or SSO here.
async fn operators_only(req: Request, next: Next) -> Response {
    let want = std::env::var("ADMIN_TOKEN").unwrap_or_else(|_| "operator-token".into());
    let ok = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        == Some(want.as_str());
    if ok {
        next.run(req).await
    } else {
        (StatusCode::UNAUTHORIZED, "operators only\n").into_response()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .init();
    let instance: String = env_or("INSTANCE", "edge-1".to_owned());
    // Start-up set: empty; what is published replaces it.
    let limiter = Limiter::builder(RuleSet::default())
        .backend_arc(ratelimit_examples::backend_from_env().await?)
        .build();
    let mut _follower = None;
    let control: Arc<dyn Control> = match std::env::var("VALKEY_URL") {
        Ok(url) => {
            let c = ValkeyControl::open(&url, ratelimit_valkey::DEFAULT_PREFIX)?
                .with_limiter(limiter.clone());
            let config = FollowConfig::new(instance.clone()).report_every(Duration::from_secs(1));
            _follower = Some(c.follow(limiter.clone(), config));
            Arc::new(c)
        }
        Err(_) => Arc::new(MemoryControl::new(limiter.clone(), &instance)),
    };

    let guard = GuardConfig::DEFAULT
        .margin_percent(env_or("GUARD_MARGIN_PERCENT", 50))
        .min_requests(env_or("GUARD_MIN_REQUESTS", 100));
    let every = Duration::from_millis(env_or("GUARD_EVERY_MS", 10_000));
    tokio::spawn(Guard::new(control.clone()).config(guard).run(every));

    let api = Router::new()
        .route("/api", get(|| async { "ok\n" }))
        .route("/search", get(|| async { "results\n" }))
        .layer(RateLimitLayer::new(limiter.clone()).for_axum());
    // Plain HTTP on 127.0.0.1 here, so the CSRF cookie is not `Secure`.
    let admin = Admin::new(limiter.clone())
        .control(control)
        .secure_cookie(false)
        .router()
        .route_layer(middleware::from_fn(operators_only));
    let app = api.nest("/admin", admin);

    let port: u16 = env_or("PORT", 3000);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("{instance} listening on http://{}", listener.local_addr()?);
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
