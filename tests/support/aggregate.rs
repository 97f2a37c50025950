//! The fleet the aggregate tests (`tests/tests/aggregate_*.rs`) drive:
//! sizes, the rule of each algorithm, and what the clients saw.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, KeyDigest, Outcome, RequestAttrs};

use super::bounds::Span;
use super::record::Sample;

/// Limiter instances, each with its own backend.
pub const INSTANCES: usize = 4;
/// Concurrent clients an instance.
pub const CLIENTS: usize = 64;
/// The rules' period.
pub const PERIOD_MS: u64 = 1000;
/// The rules' limit a period.
pub const LIMIT: u64 = 50;
/// The buckets' burst.
pub const BURST: u64 = 20;
/// How long each algorithm is driven: 5 windows of 1 s.
pub const RUN: Duration = Duration::from_millis(5_000);
/// A generous deadline: this test is about counting, not faults; a call
/// that failed would be refused (fail_mode closed) and is reported.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// Subjects sending far over the limit.
pub const HOT: [&str; 4] = [
    "198.51.100.1",
    "198.51.100.2",
    "198.51.100.3",
    "198.51.100.4",
];
/// Subjects sending well under the limit: never refused.
pub const CALM: [&str; 2] = ["203.0.113.1", "203.0.113.2"];

/// One rule `agg` of `algorithm` over every request, keyed on the
/// address, [`LIMIT`] a second, `fail_mode: closed`.
pub fn rule_json(algorithm: &str) -> String {
    let extra = match algorithm {
        "token_bucket" | "leaky_bucket" => format!(r#", "burst": {BURST}"#),
        "distinct" => r#", "distinct_of": "path""#.to_string(),
        _ => String::new(),
    };
    format!(
        r#"[{{"id": "agg", "expression": "true", "algorithm": "{algorithm}",
             "limit": {LIMIT}, "period": "1s", "key": ["ip"],
             "fail_mode": "closed"{extra}}}]"#
    )
}

/// What the clients saw, per subject IP.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// Admitted.
    pub forward: u64,
    /// Refused over the limit.
    pub limited: u64,
    /// Anything else (a failed call, closed).
    pub other: u64,
}

/// What the clients saw, by subject IP, shared by the clients.
pub type Tally = Arc<Mutex<HashMap<String, Seen>>>;

/// Counts one answer of `ip`.
pub fn tally(t: &Tally, ip: &str, outcome: Outcome) {
    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
    let s = t.entry(ip.to_string()).or_default();
    match outcome {
        Outcome::Forward => s.forward += 1,
        Outcome::Limited => s.limited += 1,
        _ => s.other += 1,
    }
}

/// The subject of `ip` under the first rule, with the public test key.
pub fn digest_of(rules: &RuleSet, ip: &str) -> KeyDigest {
    let req = RequestAttrs::new(ip.parse().expect("ip"));
    match subject(&rules.rules()[0], &req, &HashKey::DEFAULT, false) {
        KeyOutcome::Subject(d) => d,
        other => panic!("no subject for {ip}: {other:?}"),
    }
}

/// The call spans `(sent, done)` of the admitted samples.
pub fn spans(samples: &[&Sample]) -> Vec<Span> {
    samples
        .iter()
        .filter(|s| s.admitted())
        .map(|s| (s.sent_ms, s.done_ms))
        .collect()
}
