//! Pure rate-limit algorithms, the JSON rule model and the in-process request pipeline.
//!
//! `ratelimit-core` decides whether a request may pass. It holds no I/O and
//! no runtime: time comes from a [`Clock`], shared state from a
//! [`Backend`] (the bounded in-memory store by default,
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
//! Seven modules and the guide, grouped by what a program reaches for:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`rules`] | the JSON rule model, validation, [`RuleBuilder`], the rule errors and warnings |
//! | [`limiter`] | the request pipeline ([`Limiter`]): selection, penalties, fail modes, verdicts and what they report, peek/reset, temporary rules, the per-rule counters, the penalty cache, the per-IP backstop |
//! | [`keyed`] | the keyed API: any key, a rule or a quota in code, waiting (`until_ready`) |
//! | [`control`] | the fleet's control: publish, the emergency switches, lifts, the registry, the fleet size ([`control::MemoryControl`] in one process) |
//! | [`backend`] | the seam a shared-state backend implements ([`Backend`]), the store seam below it (a [`backend::StateStore`] answered by [`backend::State::step`] over [`backend::StoreBackend`]), the bounded in-memory backend ([`MemoryBackend`]), where a subject's state lives |
//! | [`algorithm`] | the five algorithms and the penalty, pure integer functions |
//! | [`guide`] | the user guide |
//!
//! At the root: what a request and its answer are ([`RequestAttrs`],
//! [`RequestView`], [`ClientIp`], [`Verdict`], [`Outcome`]), time
//! ([`Clock`], [`ManualClock`], [`SystemClock`], `TokioClock`), the keyed
//! hash ([`HashKey`], [`KeyDigest`]), match expressions ([`Expression`], a
//! subset of the Cloudflare rules language) and networks ([`Cidr`]), the
//! bounded table reserved whole ([`BoundedTable`], `ratelimit-nginx`'s zones), the
//! metric catalogue ([`Metric::CORE`], [`Metric::describe`]; the state
//! gauges are [`Limiter::set_state_gauges`]), and the types most programs name: [`RuleSet`],
//! [`Limiter`], [`MemoryBackend`].
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// The eight public modules (seven and the guide); everything else is a
// private file whose types a user names are re-exported here or in one of
// them (see "What is here" above).
pub mod algorithm;
pub mod backend;
pub mod control;
#[cfg(any(doc, doctest))]
pub mod guide;
pub mod keyed;
pub mod limiter;
pub mod rules;

mod backstop;
mod cidr;
mod client_ip;
mod clock;
mod expr;
mod hash;
pub(crate) mod heavy;
mod inner_accessors;
#[cfg(test)]
mod known_digests;
pub(crate) mod local;
mod metric_catalog;
mod normalize;
mod penalty_cache;
mod request;
mod state_address;
mod stats;
mod store;
mod subject;
mod suggest;
mod switches;
#[cfg(test)]
mod test_runtime;
mod verdict;
mod view;

pub use cidr::{Cidr, CidrError};
pub use client_ip::ClientIp;
#[cfg(feature = "tokio")]
pub use clock::TokioClock;
pub use clock::{Clock, ManualClock, SystemClock};
pub use expr::{ExprError, Expression};
pub use hash::{HashKey, KeyDigest};
pub use metric_catalog::{Metric, MetricKind, MetricSource};
pub use request::RequestAttrs;
pub use store::BoundedTable;
pub use verdict::{Outcome, Verdict};
pub use view::{RequestView, ViewerFact};

// The types most programs name, also at the root (their pages are in
// their modules).
#[doc(no_inline)]
pub use backend::{Backend, MemoryBackend};
#[doc(no_inline)]
pub use limiter::{Limiter, LimiterBuilder};
#[doc(no_inline)]
pub use rules::{Rule, RuleBuilder, RuleError, RuleSet};

// Plumbing the workspace's other crates share, not part of the documented
// API: the host and path normalization `ratelimit-nginx` mirrors in its
// keys.
#[doc(hidden)]
pub use normalize::{normalize_host, normalize_path};
