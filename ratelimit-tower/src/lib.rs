//! A tower `Layer` that rate-limits axum, hyper and any tower `Service` with
//! [`ratelimit_core`].
//!
//! Put [`RateLimitLayer`] in front of an axum `Router` (`layer` or
//! `route_layer`), in a `tower::ServiceBuilder`, or around any
//! `Service<http::Request<B>>` served by hyper. For each request it reads the
//! request's attributes ([`extract`]), asks the [`Limiter`] and then either
//! calls the inner service or answers itself:
//!
//! - 429 with `Retry-After` and `{"error":"rate_limited","retry_after":N}`,
//! - 503 with `Retry-After: 1` and `{"error":"unavailable"}` (a
//!   `fail_mode: closed` rule whose backend could not answer),
//! - 400 `{"error":"bad_request"}` (a missing key with
//!   `on_missing_key: reject`),
//!
//! (replaceable, see [`MakeResponse`]). Every answer carries the
//! `RateLimit-Policy` / `RateLimit` headers of the rules that ask for them
//! ([`headers`]). The inner service's status is counted for
//! `count_statuses` rules; the limiter's own answers never are.
//!
//! # Example
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use axum::{routing::post, Router};
//! use ratelimit_tower::{RateLimitLayer, TrustedProxies};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let layer = RateLimitLayer::from_json_str(r#"[{
//!     "id": "login",
//!     "expression": "http.request.uri.path eq \"/login\"",
//!     "algorithm": "sliding_window", "limit": 5, "period": "1m",
//!     "key": ["ip"], "ratelimit_headers": true
//! }]"#)?
//! .trusted_proxies(TrustedProxies::hops(1));
//!
//! let app = Router::new()
//!     .route("/login", post(|| async { "welcome" }))
//!     .layer(layer.clone());
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! // The client address comes from `ConnectInfo<SocketAddr>`.
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # The limiter
//!
//! [`RateLimitLayer::new`] takes any [`Limiter`], built with
//! `Limiter::builder(rules).backend(..).clock(..).build()`: the in-memory
//! backend is the default, and any [`Backend`](ratelimit_core::backend::Backend)
//! (such as Valkey) plugs in there. Clones of the layer and of the service
//! share the limiter, so `layer.limiter().publish(new_rules)` reloads rules
//! at run time (counts of unchanged rules carry over) and
//! `layer.limiter().switches()` holds the emergency switches.
//!
//! # Observability
//!
//! A `ratelimit` `tracing` span per request records the outcome; a debug
//! event per rule gives the rule id, the subject's digest (never the raw
//! key), the decision and what remains. The `metrics` counters
//! `ratelimit_decisions_total{outcome}` and
//! `ratelimit_responses_total{status_class}` add to the core's per-rule
//! counters.
//!
//! # Features
//!
//! - `axum` (default): reads the client address from axum's
//!   `ConnectInfo<SocketAddr>`.
//!
//! # MSRV
//!
//! The workspace's `rust-version` (1.88); raising it is a minor change.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod nginx;

mod body;
mod cidr;
mod claims;
mod client_ip;
mod error;
pub mod extract;
mod future;
pub mod headers;
mod layer;
pub mod proxy;
pub mod response;
mod service;

pub use body::ResponseBody;
pub use cidr::{Cidr, CidrError};
pub use claims::{AppValues, Cost, VerifiedClaims, WouldLimit};
pub use client_ip::{ClientIp, SetClientIp, SetClientIpLayer};
pub use error::LoadError;
pub use extract::{RequestExtractor, ViewerHeaders};
pub use future::ResponseFuture;
pub use layer::RateLimitLayer;
pub use proxy::{ForwardedHeader, TrustedProxies};
pub use response::{JsonResponse, MakeResponse};
pub use service::RateLimit;

pub use ratelimit_core;
pub use ratelimit_core::{Limiter, Outcome, Verdict};
