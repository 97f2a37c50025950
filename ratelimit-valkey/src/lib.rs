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
//!   functions compute, in exact integers, and reply with the decision
//!   itself: admitted or not, Retry-After (the earliest admission),
//!   remaining, reset and a penalty's end, five integers in one string.
//!   Nothing is recomputed on this side; a differential test holds every
//!   number to the core's.
//! - **One round trip.** All of a request's checks go out in one pipelined
//!   call (in cluster mode: one per node, in parallel), on one of the
//!   node's multiplexed connections (4 by default, taken round robin, see
//!   [`ValkeyBuilder::connections`]). Calls are never retried: a call that
//!   timed out may have counted. A `NOSCRIPT` reply (the script did not run) is
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
//!   [circuit breaker](BreakerConfig) per node (5 consecutive failures: 1 s
//!   without calls, then one probe). A check that got no answer is an
//!   `Err(BackendError)` (`Timeout`, `Connection`, `BreakerOpen` or
//!   `Protocol`) and the core applies the rule's `fail_mode`; its text
//!   names the node (`valkey at 127.0.0.1:6379: connection refused`).
//!   Metrics: `ratelimit_valkey_errors_total{kind}`,
//!   `ratelimit_valkey_breaker_open_total`.
//! - **Connections.** Made and remade in the background, each with a
//!   backoff, never inside a call's deadline: a call that finds none up
//!   fails at once with `Connection`, while the node's breaker is open the
//!   connections wait, and its probe wakes them and waits for one. A
//!   connection that broke is remade alone; one whose call timed out is
//!   checked with a `PING` first.
//! - **Start-up.** [`ValkeyBuilder::build`] waits at most the connect
//!   time-out for the first connections (and, in cluster mode, the slot
//!   map), then succeeds even when Valkey is down: a service whose rules
//!   fail open starts during an outage and connects when Valkey is back.
//!   [`ValkeyBuilder::require_connection`] makes it fail instead.
//! - **Hash key.** Subjects and distinct values are hashed with a secret
//!   key, and the subject's digest is part of every key name, so every
//!   instance of a fleet must hash with the same key. By default the first
//!   instance to reach Valkey creates one at `<prefix>hashkey` (`SET ..
//!   NX`, random bytes) and every instance reads it there, with no
//!   configuration; the limiter takes it from the backend
//!   ([`Backend::hash_key`](ratelimit_core::backend::Backend::hash_key)).
//!   Until it is read, checks fail with `Connection`. It is the one key
//!   without an expiry: deleting it (`FLUSHALL`) makes instances started
//!   afterwards create another, and the fleet counts apart until every
//!   instance is restarted. [`ValkeyBuilder::hash_key`] sets it explicitly
//!   instead (the same on every instance; a key set on the limiter wins
//!   over the backend's).
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
//!
//! # Limits
//!
//! Lua numbers are doubles. The token bucket needs
//! `(burst + cost) * period_ms < 2^53` and the leaky bucket
//! `(burst + cost) * period_ms / limit < 2^52` ms, with limit and period
//! below 2^31; the sliding window needs `period_ms^2 < 2^53` (periods up
//! to about 26 h) and a limit below 2^31. A check past that (a bucket's
//! burst above about 10^8 with a 24 h period; never the window limits a
//! validated rule allows) is answered with a `Protocol` error rather than
//! an inexact decision. After a change of
//! `limit` the token bucket reads its stored refill time under the new
//! limit for that first request.
//!
//! # Minimum supported Rust version
//!
//! Rust 1.88; raising it is a minor-version change.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod breaker;
mod builder;
pub mod cluster;
mod error;
pub mod fleet;
mod hashkey;
mod metrics;
mod node;
mod pool;
mod reply;
mod scripts;
mod start;
mod url;

pub use backend::ValkeyBackend;
pub use breaker::BreakerConfig;
pub use builder::{ValkeyBuilder, DEFAULT_DEADLINE, DEFAULT_PREFIX};
pub use error::Error;
pub use fleet::{FleetConfig, LiveFleet};
pub use reply::decode_reply;
pub use scripts::{key_of, script_source};
