//! An admin page for a [`Limiter`], to mount behind the application's own
//! authentication.
//!
//! [`Admin::router`] gives an axum
//! [`Router`](https://docs.rs/axum/0.8/axum/struct.Router.html) serving
//! one server-rendered HTML page (plain forms, no JavaScript) and the JSON
//! behind it:
//!
//! | route | what |
//! | --- | --- |
//! | `GET /` | the page: switches, the fleet's instances (and which have not applied the version, the switches or the last lift), rules that need attention (with the clients they would hit), penalties in force, the rules added at run time (expiry, note), each rule's rollout, the draft, the history, rule counts, the running rule set |
//! | `GET /state.json` | the counts, penalties and clients as JSON |
//! | `GET /rules.json` | the running rule set, in the format that loads ([`RuleSet::to_json`](ratelimit_core::rules::RuleSet::to_json)) |
//! | `POST /reset` | `rule`, `subject` (digest): lift a penalty, forget the subject's count, on every instance |
//! | `POST /switch` | `switch` (`disable_rate_limiting`, `disable_config_blocking`, `disable_jwt`), `on` (`true`/`false`), on every instance |
//! | `POST /remove_temporary` | `rule`: remove a rule added at run time, on every instance |
//! | `POST /check` | `json`, `note`: the page with the draft checked (errors name the rule and field; warnings) |
//! | `POST /rule` | the draft (`json`) with one rule put in from the form, in `log` |
//! | `POST /publish` | `json`, `note`, `version`: publish the draft (new rules in `log`) |
//! | `POST /canary`, `/promote`, `/demote` | `rule`, `version` (and `percent`): canary, block for everyone, back to log |
//! | `POST /rollback` | `to`, `version`: publish an earlier version again |
//!
//! Every action goes through a [`Control`]: by default a
//! [`MemoryControl`] of the limiter (one process), or the fleet's with
//! [`Admin::control`]. The [`guard`] module holds the rollback guard that
//! returns a canary to log when it blocks more than its log phase would
//! have limited. The workflow is described in the guide's "Running a
//! fleet" chapter (`docs/fleet.md`); the metrics, the dashboard and this
//! page in [Operators](guide::operators).
//!
//! # Security
//!
//! - **The router does no authentication.** Mount it behind the
//!   application's own auth, as a `route_layer` (or a layer on the nest),
//!   so that nothing, not even the page, is served to a request the auth
//!   refused. Only operators should reach it: it lifts penalties and turns
//!   rate limiting off.
//! - Every POST carries a CSRF token bound to a cookie (a random nonce,
//!   MACed with the fleet's secret, [`Control::csrf_secret`]); without it
//!   the answer is 403 and nothing changes. Instances behind one load
//!   balancer share the secret: a form posts back to any of them, also
//!   after Valkey restarted without persistence and a new secret was
//!   made (a page reads the secret on every render, and again when a
//!   token fails against the last one it read).
//! - Every change is logged with `tracing` at `info` (target
//!   `ratelimit_admin`): what changed, from what to what.
//! - Every value on the page is HTML-escaped (maud templates); clients
//!   are shown readably with credentials redacted (cookies,
//!   `authorization`, headers named like a secret), next to their digest.
//! - The cookie's `Path` is the mount path, percent-encoded outside the
//!   plain path characters: under a path parameter (`/t/{tenant}/admin`)
//!   a client cannot add attributes to it with a `;`.
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
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod actions;
mod catalog;
mod csrf;
mod fleet;
pub mod guard;
pub mod guide;
mod html;
mod routes;
mod snapshot;
mod workflow;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;
use ratelimit_core::control::{Control, MemoryControl};
use ratelimit_core::Limiter;

pub use catalog::{describe_metrics, Kind, Metric, METRICS};

/// The admin page of one limiter. Build the router with [`Admin::router`].
#[derive(Debug, Clone)]
#[must_use]
pub struct Admin {
    limiter: Limiter,
    control: Option<Arc<dyn Control>>,
    secure_cookie: bool,
}

impl Admin {
    /// The admin page of `limiter`. Its actions go through a
    /// [`MemoryControl`] of it (one process, no Valkey) unless
    /// [`Admin::control`] gives the fleet's.
    pub fn new(limiter: Limiter) -> Self {
        Self {
            limiter,
            control: None,
            secure_cookie: true,
        }
    }

    /// The fleet's control: every action (publish, switch, lift) goes
    /// through it and applies fleet-wide, the page shows its instances and
    /// history, and the CSRF secret is its
    /// ([`Control::csrf_secret`]), so a form posts back to any instance.
    pub fn control(mut self, control: Arc<dyn Control>) -> Self {
        self.control = Some(control);
        self
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
        let control = self
            .control
            .unwrap_or_else(|| Arc::new(MemoryControl::new(self.limiter.clone(), "local")));
        let state = Arc::new(routes::AdminState {
            limiter: self.limiter,
            control,
            csrf: csrf::FleetCsrf::default(),
            secure_cookie: self.secure_cookie,
        });
        Router::new()
            .route("/", get(routes::page))
            .route("/state.json", get(routes::state_json))
            .route("/rules.json", get(routes::rules_json))
            .route("/reset", post(routes::reset))
            .route("/switch", post(routes::switch))
            .route("/remove_temporary", post(routes::remove_temporary))
            .route("/check", post(actions::check))
            .route("/rule", post(actions::rule))
            .route("/publish", post(actions::publish))
            .route("/canary", post(actions::canary))
            .route("/promote", post(actions::promote))
            .route("/demote", post(actions::demote))
            .route("/rollback", post(actions::rollback))
            .with_state(state)
    }
}
