//! Pure rate-limit algorithms, the JSON rule model and the in-process request pipeline.
//!
//! `ratelimit-core` decides whether a request may pass. It holds no I/O and
//! no runtime: time comes from a [`Clock`], shared state from a backend.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod algorithm;
pub mod backend;
pub mod clock;
pub mod hash;
pub mod heavy;
pub mod keys;
pub mod request;

pub use clock::{Clock, ManualClock, SystemClock};
pub use expr::{ExprError, Expression};
pub use hash::{HashKey, KeyDigest};
pub use request::RequestAttrs;
pub mod backstop;
pub mod expr;
#[doc(hidden)]
pub mod fuzzing;
pub mod limiter;
pub mod local;
pub mod nginx;
pub mod penalty_cache;
pub mod rules;
pub mod stats;
pub mod store;
pub mod switches;
pub mod verdict;

pub use limiter::{Limiter, LimiterBuilder};
pub use verdict::{Outcome, Verdict};
