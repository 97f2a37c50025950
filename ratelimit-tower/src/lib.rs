//! A tower `Layer` that rate-limits axum, hyper and any tower `Service` with
//! [`ratelimit_core`].
//!
//! Put [`RateLimitLayer`] in front of an axum `Router` (`layer` or
//! `route_layer`), in a `tower::ServiceBuilder`, or around any
//! `Service<http::Request<B>>` served by hyper. For each request it reads the
//! request in place through a borrowed view ([`HttpView`], see [`extract`]:
//! no copy of its headers, path or query), asks the [`Limiter`] and then
//! either calls the inner service or answers itself:
//!
//! - 429 with `Retry-After` and `{"error":"rate_limited","retry_after":N}`,
//! - 503 with `Retry-After: 1` and `{"error":"unavailable"}` (a
//!   `fail_mode: closed` rule whose backend could not answer),
//! - 400 `{"error":"bad_request"}` (a missing key with
//!   `on_missing_key: reject` under a blocking rule),
//!
//! (replaceable, see [`MakeResponse`]). A request that carries no client
//! address (no [`ClientIp`], no axum `ConnectInfo<SocketAddr>`, no tonic
//! `TcpConnectInfo` with the `tonic` feature, no `SocketAddr` extension)
//! gets 500 with a body naming the fix, and an error is logged (once):
//! keyed alike, all such clients would share one bucket.
//! [`RateLimitLayer::shared_bucket_without_peer`] asks for that bucket on
//! purpose. Before any rule runs, a request whose path, query or a header
//! the rules read is longer than they may read gets 414 URI Too Long or 431
//! Request Header Fields Too Large with `{"error":"too_large"}`
//! ([`RateLimitLayer::max_uri_bytes`], [`extract::TooLarge`]): rules never
//! decide on a prefix of what the application sees. Every answer carries the
//! `RateLimit-Policy` / `RateLimit` headers of the rules that ask for them
//! ([`headers`]). A gRPC call (`content-type: application/grpc*`, a tonic
//! server behind the layer) gets each of these answers as a trailers-only
//! gRPC status instead: `RESOURCE_EXHAUSTED` with `grpc-retry-pushback-ms`
//! for a limit ([`grpc`]). The inner service's status is counted for
//! `count_statuses` rules, and what its response cost (a [`ResponseCost`]
//! extension, or a [`Charge`] it adds to while streaming) is charged to
//! `charge: response` rules when the body ends ([`charge`]); the limiter's
//! own answers never are.
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
//! // `for_axum`: answers axum's own body type, which axum then passes on
//! // as it is (see `AxumLayer`).
//! let app = Router::new()
//!     .route("/login", post(|| async { "welcome" }))
//!     .layer(layer.clone().for_axum());
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! // The client address comes from `ConnectInfo<SocketAddr>`.
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # One line
//!
//! A limit per client IP, the way governor users write it (the algorithm
//! and its guarantees: [`RateLimitLayer::per_ip_per_minute`]):
//!
//! ```no_run
//! # use axum::{routing::get, Router};
//! use ratelimit_tower::RateLimitLayer;
//! # let app: Router = Router::new().route("/", get(|| async { "hi" }));
//! let app = app.layer(RateLimitLayer::per_ip_per_minute(100).for_axum());
//! ```
//!
//! Key rules on values the layer derives from each request (a tenant from
//! an API key) with [`RateLimitLayer::key_part`] and `app:<name>` key
//! parts; give routes their own limits with axum's `Router::route_layer`.
//!
//! # The guide
//!
//! - [Getting started](crate::guide::getting_started): a limit per client
//!   address, rules for a login route, two instances on Valkey, metrics;
//!   each step a doctest.
//! - [Security](crate::guide::security): trusted proxies, and what a client
//!   can and cannot do to the limits (nested routers see stripped paths,
//!   the first of repeated query arguments is keyed, `HEAD` reaches `GET`
//!   handlers, IPv6 per /64).
//! - [Charging what a response cost](crate::guide::charges): `charge:
//!   response` rules, [`ResponseCost`] and [`Charge`], when the charge lands
//!   and how far past the limit a client can get.
//! - [gRPC](crate::guide::grpc): a tonic server behind the layer, the
//!   answers as gRPC statuses, rules for methods, one budget across HTTP
//!   and gRPC, streams.
//! - [Migrating from tower-governor](crate::guide::migrating_from_tower_governor).
//! - The rule format, expressions, the keyed API and every metric: the
//!   [guide's index](../ratelimit_core/guide/index.html) in `ratelimit-core`.
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
//! A `ratelimit` `tracing` span per request, a debug event per rule (with
//! the subject's digest, never the raw key) and the `metrics` counters
//! `ratelimit_decisions_total{outcome}` and
//! `ratelimit_responses_total{status_class}`: the guide's
//! [Observability](../ratelimit_core/guide/observability/index.html)
//! chapter lists them with the core's.
//!
//! # Features
//!
//! - `axum` (default): reads the client address from axum's
//!   `ConnectInfo<SocketAddr>`, and adds [`RateLimitLayer::for_axum`]
//!   ([`AxumLayer`]): the layer answering axum's own body type, which axum
//!   passes on as it is (it boxes any other body type on every response).
//! - `tonic`: reads the client address from tonic's `TcpConnectInfo` (not
//!   `TlsConnectInfo`, which needs a TLS stack: see the
//!   [gRPC chapter](crate::guide::grpc)), and adds a
//!   `grpc-status-details-bin` with `google.rpc.RetryInfo` to limited gRPC
//!   answers. The gRPC answers themselves need no feature.
//!
//! # MSRV
//!
//! The workspace's `rust-version` (1.88); raising it is a minor change.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod answer;
#[cfg(feature = "axum")]
mod axum_body;
mod body;
pub mod charge;
mod claims;
mod client_ip;
mod error;
pub mod extract;
mod future;
pub mod grpc;
#[cfg(any(doc, doctest))]
pub mod guide;
pub mod headers;
mod key_extractor;
mod layer;
mod make_response;
mod meter;
mod metric_catalog;
mod missing_peer;
mod observe;
mod per_ip;
pub mod proxy;
mod service;
mod shared;

#[cfg(feature = "axum")]
pub use axum_body::{AxumLayer, AxumRateLimit, AxumResponseFuture};
pub use body::ResponseBody;
pub use charge::{Charge, ResponseCost};
pub use claims::{AppValues, Cost, VerifiedClaims, WouldLimit};
pub use client_ip::{ClientIp, SetClientIp, SetClientIpLayer};
pub use error::LoadError;
pub use extract::{HttpView, RequestExtractor, TooLarge, ViewerHeaders};
pub use future::ResponseFuture;
pub use key_extractor::{KeyExtractor, RequestHead};
pub use layer::RateLimitLayer;
pub use make_response::{JsonResponse, MakeResponse};
pub use metric_catalog::{describe_metrics, METRICS};
pub use proxy::{ForwardedHeader, TrustedProxies};
pub use service::RateLimit;

pub use ratelimit_core;
pub use ratelimit_core::{Cidr, CidrError, Limiter, Outcome, Verdict};
