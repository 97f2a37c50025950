//! An admin page for a [`Limiter`], to mount behind the application's own
//! authentication.
//!
//! [`Admin::router`] gives an axum [`Router`] serving one server-rendered
//! HTML page (plain forms, no JavaScript) and the JSON behind it:
//!
//! | route | what |
//! | --- | --- |
//! | `GET /` | the page: switches, rules that need attention, penalties in force, rule counts, the running rule set |
//! | `GET /state.json` | the same as JSON |
//! | `GET /rules.json` | the running rule set, in the format that loads ([`RuleSet::to_json`](ratelimit_core::rules::RuleSet::to_json)) |
//! | `POST /reset` | `rule`, `subject` (digest): lift a penalty, forget the subject's count |
//! | `POST /switch` | `switch` (`disable_rate_limiting`, `disable_config_blocking`, `disable_jwt`), `on` (`true`/`false`) |
//!
//! # Security
//!
//! - **The router does no authentication.** Mount it behind the
//!   application's own auth, as a `route_layer` (or a layer on the nest),
//!   so that nothing, not even the page, is served to a request the auth
//!   refused. Only operators should reach it: it lifts penalties and turns
//!   rate limiting off.
//! - Every POST carries a CSRF token bound to a cookie (a random nonce,
//!   MACed with a secret drawn per [`Admin`]); without it the answer is
//!   403 and nothing changes. Several instances behind one load balancer
//!   each have their own secret: a form posts back to the instance that
//!   served it only with sticky sessions, else it is refused (reload and
//!   retry); switches are per instance anyway.
//! - Every change is logged with `tracing` at `info` (target
//!   `ratelimit_admin`): what changed, from what to what.
//! - Every value on the page is HTML-escaped; subjects are only ever shown
//!   as digests (the limiter keeps no raw key).
//! - The cookie is `Secure` by default; [`Admin::secure_cookie`] turns that
//!   off for plain-HTTP development.
//!
//! # Examples
//!
//! ```
//! use axum::response::IntoResponse;
//! use axum::{middleware, Router};
//! use ratelimit_core::{rules::RuleSet, Limiter};
//!
//! # fn is_operator(req: &axum::extract::Request) -> bool { false }
//! async fn operators_only(req: axum::extract::Request, next: middleware::Next) -> axum::response::Response {
//!     if is_operator(&req) {
//!         next.run(req).await
//!     } else {
//!         axum::http::StatusCode::FORBIDDEN.into_response()
//!     }
//! }
//!
//! let limiter = Limiter::new(RuleSet::from_json("[]").unwrap());
//! let admin = ratelimit_admin::Admin::new(limiter.clone())
//!     .router()
//!     .route_layer(middleware::from_fn(operators_only));
//! let app: Router = Router::new().nest("/admin", admin);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod catalog;
mod csrf;
mod html;
mod routes;
mod snapshot;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;
use ratelimit_core::Limiter;

pub use catalog::{describe_metrics, Kind, Metric, METRICS};
/// The state gauges, set at each scrape: `ratelimit-core`'s, re-exported.
pub use ratelimit_core::set_state_gauges;

/// The admin page of one limiter. Build the router with [`Admin::router`].
#[derive(Debug, Clone)]
#[must_use]
pub struct Admin {
    limiter: Limiter,
    secure_cookie: bool,
}

impl Admin {
    /// The admin page of `limiter`.
    pub fn new(limiter: Limiter) -> Self {
        Self {
            limiter,
            secure_cookie: true,
        }
    }

    /// Whether the CSRF cookie is `Secure` (sent over HTTPS only): on by
    /// default; turn it off only to serve the page over plain HTTP on a
    /// development machine.
    pub fn secure_cookie(mut self, on: bool) -> Self {
        self.secure_cookie = on;
        self
    }

    /// The routes, relative to where they are mounted (see the crate
    /// docs). Mount them behind the application's authentication.
    pub fn router(self) -> Router {
        let state = Arc::new(routes::AdminState {
            limiter: self.limiter,
            csrf: csrf::Csrf::new(),
            secure_cookie: self.secure_cookie,
        });
        Router::new()
            .route("/", get(routes::page))
            .route("/state.json", get(routes::state_json))
            .route("/rules.json", get(routes::rules_json))
            .route("/reset", post(routes::reset))
            .route("/switch", post(routes::switch))
            .with_state(state)
    }
}
