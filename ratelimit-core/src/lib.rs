//! Pure rate-limit algorithms, the JSON rule model and the in-process request pipeline.
//!
//! `ratelimit-core` decides whether a request may pass. It holds no I/O and
//! no runtime: time comes from a [`Clock`], shared state from a
//! [`Backend`](backend::Backend) (the bounded in-memory store by default,
//! Valkey with `ratelimit-valkey`), and the HTTP side lives in
//! `ratelimit-tower`.
//!
//! # Quick example
//!
//! ```
//! use ratelimit_core::rules::RuleSet;
//! use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};
//!
//! let rules = RuleSet::from_json(r#"[{
//!     "id": "login",
//!     "expression": "http.request.uri.path eq \"/login\"",
//!     "algorithm": "sliding_window", "limit": 5, "period": "1m",
//!     "key": ["ip"], "on_missing_key": "fallback_ip",
//!     "action": "block", "penalty": "5m", "fail_mode": "open",
//!     "ratelimit_headers": true
//! }]"#)?;
//! let clock = ManualClock::new(1_767_225_600_000);
//! let limiter = Limiter::builder(rules).clock(clock.clone()).build();
//! let login = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/login");
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! # rt.block_on(async {
//! for _ in 0..5 {
//!     assert!(limiter.check(&login).await.is_forward());
//! }
//! let sixth = limiter.check(&login).await;
//! assert_eq!(sixth.outcome, Outcome::Limited);
//! assert_eq!(sixth.retry_after_secs(), Some(300)); // the penalty
//! assert_eq!(sixth.ratelimit_policy().as_deref(), Some(r#""login";q=5;w=60"#));
//! # });
//! # Ok::<(), ratelimit_core::rules::RuleError>(())
//! ```
//!
//! # The guide
//!
//! The user guide is part of these docs, in [`guide`] (its
//! [index](guide)): [rules](guide::rules) (every field, the algorithms
//! with worked timelines, keys, penalties, fail modes, headers),
//! [expressions](guide::expressions), [the keyed API](guide::keyed) and
//! [observability](guide::observability) here; deploying with Valkey,
//! security and the migrations from tower-governor and nginx in the other
//! crates of the workspace.
//!
//! # What is here
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`algorithm`] | the five algorithms and the penalty, pure integer functions |
//! | [`rules`] | the JSON rule model, validation, [`rules::RuleBuilder`] |
//! | [`cidr`] | [`Cidr`], the network type of expressions, allow lists and trusted proxies |
//! | [`expr`] | match expressions (a subset of the Cloudflare rules language) |
//! | [`keyed`] | the keyed API: any key, a rule or a quota in code, waiting (`until_ready`) |
//! | [`keys`] | the subject digest a rule gives a request (for tools that cross-check stored keys) |
//! | [`limiter`] | the request pipeline: selection, penalties, fail modes, verdicts, publishing, peek/reset, temporary rules |
//! | [`backend`] | the seam a shared-state backend implements ([`backend::Backend`]) |
//! | [`store`] | the bounded in-memory backend |
//! | [`penalty_cache`] | the bounded local penalty cache, as [`Limiter::penalty_cache`] shows it |
//! | [`backstop`] | the per-IP backstop's settings ([`LimiterBuilder::backstop`]) |
//! | [`stats`] | per-rule and limiter counters |
//! | [`switches`] | the emergency switches and the fleet size |
//! | [`control`] | the fleet's control: publish, switches, lifts, the registry ([`control::MemoryControl`] in one process) |
//! | [`normalize`] | host and path normalization shared with `ratelimit-nginx` |
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod algorithm;
pub mod backend;
pub mod backstop;
pub mod cidr;
mod client_ip;
pub mod clock;
pub mod control;
pub mod expr;
#[cfg(any(doc, doctest))]
pub mod guide;
pub mod hash;
pub(crate) mod heavy;
pub mod keyed;
pub mod keys;
#[cfg(test)]
mod known_digests;
pub mod limiter;
pub(crate) mod local;
mod metric_catalog;
pub mod normalize;
pub mod penalty_cache;
pub mod request;
pub mod rules;
mod state_gauges;
mod state_key;
pub mod stats;
pub mod store;
pub mod switches;
pub mod verdict;
pub mod view;

pub use cidr::{Cidr, CidrError};
pub use client_ip::ClientIp;
#[cfg(feature = "tokio")]
pub use clock::TokioClock;
pub use clock::{Clock, ManualClock, SystemClock};
pub use expr::{ExprError, Expression};
pub use hash::{HashKey, KeyDigest};
pub use limiter::{Limiter, LimiterBuilder};
pub use metric_catalog::{describe_catalogue, describe_metrics, Metric, MetricKind, METRICS};
pub use request::RequestAttrs;
pub use state_gauges::set_state_gauges;
pub use verdict::{Outcome, Verdict};
pub use view::{RequestView, ViewerFact};
