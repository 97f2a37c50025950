//! Cross-crate integration tests, against a real valkey-server where they need one.
//!
//! The tests live in `tests/tests/*.rs`, one file per concern:
//!
//! | file | what it shows |
//! | --- | --- |
//! | `aggregate.rs` | 4 instances x 64 clients on one Valkey never admit more than the limit, for every algorithm, and through the tower layer over TCP |
//! | `faults.rs` | Valkey killed, restarted, paused, slow, one cluster primary down: bounded latency, fail modes, breaker, no retries |
//! | `hostile_http.rs` | hostile bytes over raw TCP through the tower layer: answered, keyed right, bounded stores |
//!
//! This library holds what they share ([`support`]).
#![forbid(unsafe_code)]

pub mod support;
