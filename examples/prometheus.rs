//! Operators' view: Prometheus metrics on `/metrics` and the admin page on
//! `/admin`, behind the application's own auth.
//!
//! Shows: installing `metrics-exporter-prometheus`'s recorder (no HTTP
//! listener of its own: the axum app serves `/metrics`) before the limiter
//! is built, so every rule's counters are registered; histogram buckets for
//! the Valkey round trips; the state gauges set at each scrape
//! (`Limiter::set_state_gauges`); the `ratelimit-admin` router
//! nested at `/admin` behind a `route_layer` that lets only an operator's
//! bearer token through. Rules: `examples/rules/operators.json` (a login
//! rule with a penalty, a log rule on `/search`, a fail-closed rule on
//! `/export`). With `VALKEY_URL` set, counts are shared through Valkey and
//! the per-node Valkey metrics appear. See `docs/operators.md`.
//!
//! ```text
//! cargo run -p ratelimit-examples --example prometheus   # 127.0.0.1:3000 (PORT to change)
//! for i in $(seq 6); do curl -s -X POST -H 'x-user: alice' localhost:3000/login; done
//! for i in $(seq 12); do curl -s -H 'x-client: crawler-7' localhost:3000/search; done
//! curl -s localhost:3000/metrics | grep ratelimit_
//! curl -s -H 'authorization: Bearer operator-token' localhost:3000/admin/state.json
//! scripts/admin-browser-test.sh   # the page in headless Chromium
//! ```
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use ratelimit_admin::Admin;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::RateLimitLayer;

const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/operators.json");

/// Round-trip buckets (seconds): a healthy Valkey answers in well under a
/// millisecond on a LAN; the deadline is tens of milliseconds.
const VALKEY_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
];

/// The recorder, installed globally. Must run before the limiter is built.
fn install_recorder() -> Result<PrometheusHandle, Box<dyn std::error::Error>> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("ratelimit_valkey_call_duration_seconds".into()),
            VALKEY_BUCKETS,
        )?
        .install_recorder()?;
    // Each crate describes the metrics it emits (`ratelimit_admin::describe_metrics`
    // would describe every crate's).
    ratelimit_core::Metric::describe(ratelimit_core::Metric::CORE);
    ratelimit_tower::describe_metrics();
    ratelimit_valkey::describe_metrics();
    // Histograms keep their recent samples until upkeep drains them.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

#[derive(Clone)]
struct Scrape {
    handle: PrometheusHandle,
    limiter: Limiter,
}

/// `GET /metrics`: the state gauges, then the text format.
async fn metrics(State(s): State<Scrape>) -> Response {
    s.limiter.set_state_gauges();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        s.handle.render(),
    )
        .into_response()
}

/// The application's auth for operators: a bearer token (from
/// `ADMIN_TOKEN`, `operator-token` by default). A real application checks
/// its session or SSO here. Refused requests never reach the admin routes.
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
    // The admin page logs every change at info (target `ratelimit_admin`).
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .init();
    let handle = install_recorder()?;
    let rules = RuleSet::from_json(&std::fs::read_to_string(RULES)?)?;
    let limiter = Limiter::builder(rules)
        .backend_arc(ratelimit_examples::backend_from_env().await?)
        .build();

    // The application, rate limited.
    let api = Router::new()
        .route("/login", post(|| async { "welcome\n" }))
        .route("/search", get(|| async { "results\n" }))
        .route("/export", get(|| async { "export\n" }))
        .layer(RateLimitLayer::new(limiter.clone()).for_axum());
    // Operators' routes, outside the rate limit: the scrape, and the admin
    // page behind the auth (a route_layer: nothing is served without it).
    // Plain HTTP on 127.0.0.1 here, so the CSRF cookie is not `Secure`.
    let admin = Admin::new(limiter.clone())
        .secure_cookie(false)
        .router()
        .route_layer(middleware::from_fn(operators_only));
    let app = api
        .route(
            "/metrics",
            get(metrics).with_state(Scrape {
                handle,
                limiter: limiter.clone(),
            }),
        )
        .nest("/admin", admin);

    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("listening on http://{}", listener.local_addr()?);
    println!("metrics: /metrics; admin: /admin (Authorization: Bearer operator-token)");
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
