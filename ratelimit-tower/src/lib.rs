//! A tower `Layer` that rate-limits axum, hyper and any tower `Service` with `ratelimit-core`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod nginx;
