//! The keyed API: the same engine for calls that are not HTTP requests —
//! outbound API calls, job queues, WebSocket messages, per-tenant work.
//!
//! A [`KeyedLimit`] is a handle on one rule of the published set
//! ([`Limiter::keyed_rule`](crate::Limiter::keyed_rule)) or on a [`Quota`]
//! written in code ([`Limiter::keyed_quota`](crate::Limiter::keyed_quota)).
//! It counts any [`Key`] the caller supplies (bytes, strings, integers,
//! `()` for an unkeyed limit, tuples of them) at a cost, on the limiter's
//! backend: in memory, or fleet-wide on Valkey in one round trip per call.
//!
//! - [`KeyedLimit::check`] / [`check_n`](KeyedLimit::check_n): a
//!   [`KeyedDecision`] (allowed, remaining, reset, retry-after); errors
//!   ([`KeyedError`]) only for a cost that can never fit and a backend
//!   failure under `fail_mode: closed`.
//! - [`KeyedLimit::until_ready`] / [`until_ready_n`](KeyedLimit::until_ready_n):
//!   sleep until admitted, within a budget, with optional jitter, through
//!   a [`Sleep`] the caller hands in (the core has no runtime).
//! - [`KeyedLimit::charge`]: a cost known once the work is done, charged
//!   whether or not it fits (the total may pass the limit).
//! - [`KeyedLimit::peek`] and [`KeyedLimit::reset`].
//!
//! Keys are hashed with the limiter's [`HashKey`](crate::HashKey) into the
//! same [`KeyDigest`](crate::KeyDigest) as HTTP subjects, under a key derived
//! for keyed calls: a keyed call never lands on an HTTP request's subject.
//! A quota's state lives in a namespace no rule can have; a named rule's
//! keyed calls share its namespace, statistics and penalty cache, under
//! keyed subjects.
//!
//! # Examples
//!
//! ```
//! use std::num::NonZeroU32;
//! use std::time::Duration;
//! use ratelimit_core::keyed::Quota;
//! use ratelimit_core::rules::RuleSet;
//! use ratelimit_core::{Limiter, ManualClock};
//!
//! const PER_TENANT: Quota = Quota::per_second(NonZeroU32::new(2).unwrap());
//!
//! let clock = ManualClock::new(1_767_225_600_000);
//! let limiter = Limiter::builder(RuleSet::default()).clock(clock.clone()).build();
//! let jobs = limiter.keyed_quota("jobs", PER_TENANT);
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! assert!(jobs.check("acme").await?.is_allowed());
//! assert!(jobs.check("acme").await?.is_allowed());
//! let third = jobs.check("acme").await?;
//! assert_eq!(third.retry_after(), Some(Duration::from_millis(500)));
//! clock.advance(Duration::from_millis(500));
//! assert!(jobs.check("acme").await?.is_allowed());
//! # Ok::<(), ratelimit_core::keyed::KeyedError>(())
//! # }).unwrap();
//! ```

mod charge;
mod decision;
mod error;
mod key_trait;
mod limit;
mod quota;
mod wait;

pub use decision::KeyedDecision;
pub use error::KeyedError;
pub use key_trait::{Key, KeyWriter};
pub use limit::KeyedLimit;
pub use quota::Quota;
pub use wait::Sleep;

#[cfg(test)]
mod tests;
