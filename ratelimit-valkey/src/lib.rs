//! The fleet-wide Valkey backend for `ratelimit-core`: Lua scripts, one
//! round trip per request.
//!
//! [`ValkeyBackend`] implements the core's
//! [`Backend`](ratelimit_core::backend::Backend) seam. Every rule keeps one
//! key per subject in Valkey, shared by every instance, so a limit of 100
//! means 100 across the fleet.
//!
//! - **Scripts.** Lua (`src/scripts/*.lua`: a shared prelude for the
//!   time, each check's start, per algorithm its common path written
//!   inline, then shared helpers for expiry and the penalty and the rest of
//!   the algorithm's check, so a common path makes no Lua function),
//!   loaded once and called with `EVALSHA`: one script per algorithm for a
//!   request of one check, and the batch script for a request of several,
//!   which runs each check's algorithm in turn (the same code), each in a
//!   protected call so that one check's error stays its own. They compute
//!   exactly what the core's pure functions compute, in exact integers,
//!   and reply with the decision itself: admitted or not, Retry-After (the
//!   earliest admission), remaining, reset and a penalty's end, five
//!   integers in one string (a line per check for a batch). Nothing is
//!   recomputed on this side; differential tests hold every number to the
//!   core's, one check and batches of mixed rules.
//! - **Calls.** A request's checks travel as one script call: the whole
//!   batch on a standalone server, one call per hash slot in a cluster (a
//!   subject is one slot whatever the rule), one round trip per node; a
//!   `NOSCRIPT` reload or a cluster redirect takes a call whole.
//! - **Deployment.** URLs and TLS, keys and hash tags, sizing, Valkey
//!   Cluster, start-up while Valkey is down, reconnection, the deadline and
//!   the circuit breaker, the fleet's hash key and what a failover can
//!   lose: the guide's [Valkey](crate::guide::valkey) chapter.
//! - **Metrics.** Errors by kind, and per node calls by result, the
//!   round-trip histogram and the breaker's state: `docs/operators.md`.
//!
//! # Examples
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use ratelimit_core::rules::{RuleBuilder, RuleSet};
//! use ratelimit_core::{Limiter, RequestAttrs};
//! use ratelimit_valkey::{FleetConfig, ValkeyBackend};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let backend = ValkeyBackend::builder("valkey://127.0.0.1:6379")
//!     .key_prefix("rl:")
//!     .deadline(Duration::from_millis(50))
//!     .build()
//!     .await?;
//! let rule = RuleBuilder::new("login")
//!     .expression(r#"http.request.uri.path eq "/login""#)
//!     .sliding_window(5, Duration::from_secs(60))
//!     .key(["ip"])
//!     .build()?;
//! let fleet = backend.live_fleet(FleetConfig::new("edge-1", 4));
//! let limiter = Limiter::builder(RuleSet::from_rules(vec![rule])?)
//!     .backend(backend)
//!     .fleet_size(fleet.shared())
//!     .build();
//! let req = RequestAttrs::new("203.0.113.7".parse()?).with_path("/login");
//! let verdict = limiter.check(&req).await;
//! # let _ = verdict;
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! - `tls`: `rediss://` and `valkeys://` URLs, through rustls (see the
//!   [guide](crate::guide::valkey#urls-and-tls)).
//!
//! # Limits
//!
//! Lua numbers are doubles. The buckets need
//! `(burst + cost) * period_ms < 2^53`; the sliding window needs
//! `period_ms^2 < 2^53` (periods up to about 26 h) and a limit below 2^31.
//! A check past that (a bucket's burst above about 10^8 with a 24 h
//! period; never the window limits a validated rule allows) is answered
//! with a `Protocol` error rather than an inexact decision. A bucket's key
//! holds the limit it was written under beside its level, so a publish
//! that changes `limit` keeps the level, refilled (or drained) at the new
//! rate, as the core does.
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod backend;
mod breaker;
mod builder;
mod call;
pub mod cluster;
pub mod control;
mod error;
pub mod fleet;
#[cfg(any(doc, doctest))]
pub mod guide;
mod hashkey;
mod key_cell;
mod link;
mod metric_catalog;
mod metrics;
mod node;
mod pool;
mod reply;
mod route;
mod scripts;
mod start;
mod url;

pub use backend::ValkeyBackend;
pub use breaker::BreakerConfig;
pub use builder::{ValkeyBuilder, DEFAULT_DEADLINE, DEFAULT_PREFIX};
pub use error::Error;
pub use fleet::{FleetConfig, LiveFleet};
pub use metric_catalog::{describe_metrics, METRICS};
pub use reply::decode_reply;
pub use scripts::{batch_script_source, key_of, script_source};
