//! Plays the conformance timeline cases against a backend and reports each.
//!
//! The case format (see `cases/`): a rule set, then
//! requests at given times with the answer the client must see. The runner
//! drives an injected clock, never the wall clock, and fails a case with a
//! field it does not know.
//!
//! ```text
//! cargo run -p ratelimit-conformance -- --backend memory CASE.json...
//! cargo run -p ratelimit-conformance -- --backend valkey CASE.json...
//! cargo run -p ratelimit-conformance -- --backend memory --via grpc CASE.json...
//! ```
//!
//! `--via core` (the default) calls the limiter, `--via tower` sends
//! `http::Request`s through the tower layer, `--via grpc` makes unary calls
//! of a tonic client to a tonic server behind the layer over loopback and
//! reads each gRPC status back as HTTP ([`GrpcHarness`]).
//!
//! Beyond the shared format, a case may run a fleet: `"instances": 2` (up
//! to 8) starts that many limiters on one backend (the in-memory store or
//! the same Valkey keys), each with its own caches; a request step's
//! `"instance": 1` sends it to that instance (default 0); and a step
//! `{"at": 2, "publish": [rules...]}` (alone) publishes a rule set to
//! every instance as the fleet's control does, after the control's check
//! (size, schema, validation: a refused set fails the case). See
//! `cases/fleet_*.json`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod case;
pub mod grpc_harness;
pub mod harness;
pub mod run;
pub mod tower_harness;
pub mod valkey;

pub use case::{Case, ORIGIN_MS};
pub use grpc_harness::GrpcHarness;
pub use harness::{Harness, LimiterHarness, Reply};
pub use run::{check_invalid, load_case, play, rule_set};
pub use tower_harness::TowerHarness;
pub use valkey::ValkeyEnv;

use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::{Limiter, ManualClock};

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every expectation held.
    Passed,
    /// Something did not hold.
    Failed(String),
    /// The case does not apply to this backend.
    Skipped(String),
}

/// Which code path plays the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `Limiter::check` directly.
    Core,
    /// The tower layer, with `http::Request`s.
    Tower,
    /// A tonic server behind the tower layer, with a tonic client over
    /// loopback TCP (see [`GrpcHarness`]).
    Grpc,
}

/// Plays `case` on the in-memory backend, through core.
pub async fn run_memory(case: &Case) -> Verdict {
    run_memory_via(case, Via::Core).await
}

/// Plays `case` on the in-memory backend, through `via`.
pub async fn run_memory_via(case: &Case, via: Via) -> Verdict {
    if !case.applies_to("memory") {
        return Verdict::Skipped(format!(
            "backends {:?}",
            case.backends.clone().unwrap_or_default()
        ));
    }
    if case.expect_invalid == Some(true) {
        return to_verdict(check_invalid(case));
    }
    let rules = match rule_set(case) {
        Ok(r) => r,
        Err(e) => return Verdict::Failed(format!("rules refused: {e}")),
    };
    let count = match case.instance_count() {
        Ok(n) => n,
        Err(e) => return Verdict::Failed(e),
    };
    let clock = ManualClock::new(ORIGIN_MS);
    // The instances share one store, as a fleet shares Valkey.
    let store: Arc<dyn Backend> = Arc::new(MemoryBackend::default());
    let limiters = (0..count)
        .map(|_| {
            Limiter::builder(rules.clone())
                .clock(clock.clone())
                .backend_arc(store.clone())
                .fleet_size(case.fleet_size.unwrap_or(1))
                .build()
        })
        .collect();
    play_via(case, limiters, clock, None, via).await
}

/// Plays `case` with the instances' `limiters` (at least one, all on
/// `clock`) through `via`; `toggle` takes the shared backend down and up,
/// when there is one.
pub async fn play_via(
    case: &Case,
    limiters: Vec<Limiter>,
    clock: ManualClock,
    toggle: Option<harness::Toggle>,
    via: Via,
) -> Verdict {
    let Some(first) = limiters.first().cloned() else {
        return Verdict::Failed("no instance".into());
    };
    match via {
        Via::Core => {
            let mut h = LimiterHarness {
                limiter: first,
                instances: limiters,
                clock,
                toggle,
            };
            to_verdict(play(case, &mut h).await)
        }
        Via::Tower => {
            let mut h = TowerHarness::fleet(limiters, clock, toggle);
            to_verdict(play(case, &mut h).await)
        }
        Via::Grpc => match GrpcHarness::start(limiters, clock, toggle).await {
            Ok(mut h) => to_verdict(play(case, &mut h).await),
            Err(e) => Verdict::Failed(format!("grpc harness: {e}")),
        },
    }
}

/// The case files of `dir` (`*.json`), sorted.
///
/// # Errors
///
/// The folder cannot be read.
pub fn case_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Turns a play result into a verdict.
pub fn to_verdict(r: Result<(), String>) -> Verdict {
    match r {
        Ok(()) => Verdict::Passed,
        Err(e) => Verdict::Failed(e),
    }
}
