//! Runnable examples: quickstart, axum API, hyper server, nginx-style limits.
#![forbid(unsafe_code)]
