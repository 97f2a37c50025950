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
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod case;
pub mod harness;
pub mod run;
pub mod tower_harness;
pub mod valkey;

pub use case::{Case, ORIGIN_MS};
pub use harness::{Harness, LimiterHarness, Reply};
pub use run::{check_invalid, load_case, play, rule_set};
pub use tower_harness::TowerHarness;
pub use valkey::ValkeyEnv;

use ratelimit_core::switches::StaticFleet;
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
    let clock = ManualClock::new(ORIGIN_MS);
    let limiter = Limiter::builder(rules)
        .clock(clock.clone())
        .fleet_size(StaticFleet(case.fleet_size.unwrap_or(1)))
        .build();
    play_via(case, limiter, clock, None, via).await
}

/// Plays `case` with `limiter` (whose clock is `clock`) through `via`;
/// `toggle` takes the shared backend down and up, when there is one.
pub async fn play_via(
    case: &Case,
    limiter: Limiter,
    clock: ManualClock,
    toggle: Option<harness::Toggle>,
    via: Via,
) -> Verdict {
    match via {
        Via::Core => {
            let mut h = LimiterHarness {
                limiter,
                clock,
                toggle,
            };
            to_verdict(play(case, &mut h).await)
        }
        Via::Tower => {
            let mut h = TowerHarness::new(limiter, clock, toggle);
            to_verdict(play(case, &mut h).await)
        }
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
