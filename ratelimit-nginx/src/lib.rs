//! nginx-compatible `limit_req` / `limit_conn` for Rust services: paste the
//! nginx directives, get the same decisions.
//!
//! `ratelimit-nginx` parses `limit_req_zone`, `limit_conn_zone`,
//! `limit_req`, `limit_conn` and their `*_status`, `*_dry_run` and
//! `*_log_level` settings, keeps the zones in preallocated memory as nginx
//! does, and applies nginx's leaky-bucket arithmetic (milli-requests,
//! milliseconds). With feature `tower`, `LimitReqLayer` and
//! `LimitConnLayer` apply them to any tower `Service` over `http`
//! requests (axum, hyper).
//!
//! * [`NginxConfig`] holds the zones (`limit_req_zone`, `limit_conn_zone`)
//!   and the top-level settings; [`Level`] holds the limit directives of a
//!   site or location, inheriting what it does not set.
//! * [`ZoneRegistry`] keeps the zones of the process by name; loading a
//!   configuration gives [`Zones`], and a reload keeps the counts of a zone
//!   whose name, size, key and rate are unchanged.
//! * [`LimitReqPolicy::check`] applies a level's `limit_req` list to a
//!   request; [`LimitConnPolicy::acquire`] counts a request in progress
//!   until its [`ConnPermit`] is dropped.
//!
//! Zones live in preallocated memory, sized as nginx sizes them and never
//! more: each keeps its states in core's
//! [`BoundedTable`](ratelimit_core::BoundedTable), reserved whole when the
//! zone is made (see the guide's
//! [Migrating from nginx](crate::guide::migrating_from_nginx#where-it-differs-from-nginx)).
//! Time is injected as milliseconds; the policies do no I/O and never wait:
//! the `limit_req` layer sleeps for [`ReqDecision::delay`].
//!
//! # Example
//!
//! ```
//! use ratelimit_nginx::{Level, LimitReqStatus, NginxConfig, ZoneRegistry};
//! use ratelimit_core::{Clock, ManualClock, RequestAttrs};
//! use std::time::Duration;
//!
//! let config = NginxConfig::parse(
//!     "limit_req_zone $client_ip zone=perip:10m rate=10r/s;\n\
//!      limit_conn_zone $client_ip zone=conns:10m;",
//! )?;
//! let zones = ZoneRegistry::new().load(&config)?;
//! let login = zones.limit_req(&Level::parse("limit_req zone=perip burst=2 nodelay; limit_req_status 429;")?)?;
//!
//! let clock = ManualClock::new(1_767_225_600_000);
//! let guess = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/wp-login.php");
//! for _ in 0..3 {
//!     assert_eq!(login.check(&guess, clock.now_ms()).status(), Some(LimitReqStatus::Passed));
//! }
//! let fourth = login.check(&guess, clock.now_ms());
//! assert_eq!(fourth.rejected().map(|r| r.status()), Some(429));
//! // 10r/s drains one request every 100 ms.
//! clock.advance(Duration::from_millis(100));
//! assert!(login.check(&guess, clock.now_ms()).rejected().is_none());
//! # Ok::<(), ratelimit_nginx::ConfigError>(())
//! ```
//!
//! # Tower layers (feature `tower`)
//!
//! Put the layers on a route (axum's `route_layer`) as nginx puts the
//! directives in a `location`, in front of everything else, so that a
//! refused request never reaches the application.
//!
//! ```
//! # #[cfg(feature = "axum")]
//! # fn main() -> Result<(), ratelimit_nginx::ConfigError> {
//! use axum::{routing::post, Router};
//! use ratelimit_nginx::{Level, LimitReqLayer, NginxConfig, ZoneRegistry};
//!
//! let config = NginxConfig::parse("limit_req_zone $client_ip zone=perip:10m rate=10r/s;")?;
//! let zones = ZoneRegistry::global().load(&config)?;
//! let login = zones.limit_req(&Level::parse("limit_req zone=perip burst=2 nodelay; limit_req_status 429;")?)?;
//! let app: Router = Router::new()
//!     .route("/wp-login.php", post(|| async { "checked" }))
//!     .route_layer(LimitReqLayer::new(login));
//! // Serve with `app.into_make_service_with_connect_info::<SocketAddr>()`.
//! # let _ = app;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "axum"))]
//! # fn main() {}
//! ```
//!
//! The client address and trusted proxies, the 500 answered without one,
//! `$limit_req_status` as extensions, delays and `limit_conn`'s count, and
//! everything else that differs from nginx: the guide's
//! [Migrating from nginx](crate::guide::migrating_from_nginx) chapter.
//!
//! # Features
//!
//! - `tower`: the layers `LimitReqLayer` and `LimitConnLayer` (tower, http,
//!   tokio's timer).
//! - `axum` (implies `tower`): the layers also read axum's
//!   `ConnectInfo<SocketAddr>`.
//!
//! None is on by default: the parser, zones and policies need only
//! `ratelimit-core`.
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod arith;
mod config;
mod conn_policy;
mod conn_zone;
mod directive;
mod error;
#[cfg(any(doc, doctest))]
pub mod guide;
mod key;
mod level;
mod lexer;
mod log;
mod metric_catalog;
mod parser;
mod policy;
mod rate;
mod registry;
mod req_policy;
mod req_zone;
mod size;
mod status;
mod zone_spec;
mod zone_states;

#[cfg(feature = "tower")]
mod layers;

pub use config::{NginxConfig, NginxConfigBuilder, ParseOptions};
pub use conn_policy::{ConnDecision, ConnPermit, LimitConnPolicy};
pub use conn_zone::LimitConnZone;
pub use directive::{Delay, LimitConnDirective, LimitReqDirective};
pub use error::{ConfigError, ConfigErrorKind, Span};
pub use key::{KeySource, KeyTemplate};
pub use level::{Level, LevelBuilder};
pub use metric_catalog::{describe_metrics, METRICS};
pub use rate::Rate;
pub use registry::{ZoneRegistry, Zones};
pub use req_policy::{LimitReqPolicy, ReqDecision};
pub use req_zone::LimitReqZone;
pub use size::ZoneSize;
pub use status::{LimitConnStatus, LimitKind, LimitRejected, LimitReqStatus, LogLevel};
pub use zone_spec::{ZoneKind, ZoneSpec};

#[cfg(feature = "tower")]
pub use layers::{
    ConnBody, ConnFuture, LimitConn, LimitConnLayer, LimitReq, LimitReqLayer, ReqFuture, SiteName,
};
