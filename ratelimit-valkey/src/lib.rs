//! The fleet-wide Valkey backend for `ratelimit-core`: Lua scripts, one
//! round trip per request.
//!
//! [`ValkeyBackend`] implements the core's
//! [`Backend`](ratelimit_core::backend::Backend) seam. Every rule keeps one
//! key per subject in Valkey, shared by every instance, so a limit of 100
//! means 100 across the fleet.
//!
//! - **Scripts.** One Lua script per algorithm (`src/scripts/*.lua`, with a
//!   shared prelude for time, expiry and the penalty), loaded once and
//!   called with `EVALSHA`. They compute exactly what the core's pure
//!   functions compute; the reply carries the state they found and the
//!   decision's numbers are recomputed by the core's own code, in exact
//!   integers (a differential test checks both agree).
//! - **One round trip.** All of a request's checks go out in one pipelined
//!   call (in cluster mode: one per node, in parallel), over a shared
//!   multiplexed connection. Calls are never retried: a call that timed out
//!   may have counted. A `NOSCRIPT` reply (the script did not run) is
//!   answered by loading the script and sending that check, once.
//! - **Keys.** `<prefix>{<subject>}<namespace>` in 27 bytes (see
//!   [`key_of`]), the subject as the hash tag so one subject lives in one
//!   slot. One key per subject, as
//!   small as Valkey allows (an integer value where possible, the window's
//!   end carried by the key's expiry); every key expires.
//! - **Penalty.** Over the limit with a penalty, the subject's key becomes
//!   a "blocked until" marker expiring at the penalty's end: any instance
//!   asking gets "blocked" without counting, and counting starts fresh
//!   after it.
//! - **Failures.** A deadline per call (50 ms by default) and a
//!   [circuit breaker](breaker) per node (5 consecutive failures: 1 s
//!   without calls, then one probe). A check that got no answer is an
//!   `Err(BackendError)` (`Timeout`, `Connection`, `BreakerOpen` or
//!   `Protocol`) and the core applies the rule's `fail_mode`. Metrics:
//!   `ratelimit_valkey_errors_total{kind}`,
//!   `ratelimit_valkey_breaker_open_total`.
//! - **Fleet size.** [`ValkeyBackend::live_fleet`] announces the instance
//!   and keeps a live count for `fail_mode: local` (see [`fleet`]).
//! - **Cluster.** [`ValkeyBuilder::cluster`]; see [`cluster`]. The servers
//!   must run with `cluster-require-full-coverage no`, or one failed
//!   primary fails every key instead of its own.
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
//! - `tls`: `rediss://` and `valkeys://` URLs (redis-rs with rustls, the
//!   `ring` provider and the webpki root certificates: no OpenSSL). A
//!   program whose dependencies also turn on rustls's `aws-lc-rs` must
//!   install a default `CryptoProvider` before connecting.
//! - `testing`: [`testing`], spawning `valkey-server` (single node or a
//!   3-primary cluster) and a chaos proxy for tests.
//!
//! # Limits
//!
//! Lua numbers are doubles. The token bucket needs
//! `(burst + cost) * period_ms < 2^53` and the leaky bucket
//! `(burst + cost) * period_ms / limit < 2^52` ms; a check past that
//! (a burst above about 10^8 with a 24 h period) is answered with a
//! `Protocol` error rather than an inexact decision. After a change of
//! `limit` the token bucket reads its stored refill time under the new
//! limit for that first request.
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
pub mod breaker;
mod builder;
pub mod cluster;
mod error;
pub mod fleet;
#[doc(hidden)]
pub mod fuzzing;
mod metrics;
mod node;
mod reply;
mod scripts;
#[cfg(feature = "testing")]
pub mod testing;
mod url;

pub use backend::ValkeyBackend;
pub use builder::{ValkeyBuilder, DEFAULT_DEADLINE, DEFAULT_PREFIX};
pub use error::Error;
pub use fleet::{FleetConfig, LiveFleet};
pub use scripts::{key_of, script_source};
