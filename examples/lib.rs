//! Runnable examples: quickstart, axum API, hyper server, nginx-style limits.
#![forbid(unsafe_code)]

/// The README's code, compiled as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
