//! Pure rate-limit algorithms, the JSON rule model and the in-process request pipeline.
//!
//! `ratelimit-core` decides whether a request may pass. It holds no I/O and
//! no runtime: time comes from a [`Clock`], shared state from a backend.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod clock;
pub mod hash;
pub mod request;

pub use clock::{Clock, ManualClock, SystemClock};
pub use expr::{ExprError, Expression};
pub use hash::{HashKey, KeyDigest};
pub use request::RequestAttrs;
pub mod expr;
pub mod nginx;
