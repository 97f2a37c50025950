//! The fleet of the fault tests (`tests/tests/faults_*.rs`): rules with
//! each fail mode, limiters on one Valkey that record their backend calls
//! into one log, the timing bounds, and a lock the tests take turns on.

use std::net::IpAddr;
use std::time::Duration;

use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_valkey::ValkeyBackend;

use super::load::Answer;
use super::record::Log;
use super::{unique, wall_ms};

/// The fault tests take turns.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Each backend's deadline.
pub const DEADLINE: Duration = Duration::from_millis(50);
/// What this small shared machine may add to the deadline.
pub const MARGIN_MS: u64 = 150;
/// Longest acceptable answer: the deadline plus the margin.
pub const BOUND_MS: u64 = 50 + MARGIN_MS;
/// After a fault starts, requests already on the wire may still succeed.
pub const SETTLE_MS: u64 = 100;
/// The instances of a fleet.
pub const INSTANCES: usize = 2;
/// Clients of the background load, spread over the instances.
pub const CLIENTS: usize = 16;
/// The paths of the background load: one rule of each fail mode.
pub const PATHS: &[&str] = &["/open", "/closed"];

/// `open`, `closed`, `local` (10 an hour) and `shared` (6 an hour) rules.
pub const RULES: &str = r#"[
  {"id": "open", "expression": "http.request.uri.path eq \"/open\"",
   "algorithm": "fixed_window", "limit": 1000000, "period": "1s", "key": ["ip"],
   "fail_mode": "open"},
  {"id": "closed", "expression": "http.request.uri.path eq \"/closed\"",
   "algorithm": "fixed_window", "limit": 1000000, "period": "1s", "key": ["ip"],
   "fail_mode": "closed"},
  {"id": "local", "expression": "http.request.uri.path eq \"/local\"",
   "algorithm": "token_bucket", "limit": 10, "burst": 10, "period": "1h", "key": ["ip"],
   "fail_mode": "local"},
  {"id": "shared", "expression": "http.request.uri.path eq \"/shared\"",
   "algorithm": "token_bucket", "limit": 6, "burst": 6, "period": "1h", "key": ["ip"],
   "fail_mode": "closed"}
]"#;

/// [`RULES`], loaded.
pub fn rules() -> RuleSet {
    RuleSet::from_json(RULES).expect("rules")
}

/// Limiters, each with its own backend (own connections and breaker), all
/// recording into one log.
pub struct Fleet {
    /// One limiter an instance.
    pub limiters: Vec<Limiter>,
    /// The backend calls of all of them.
    pub log: Log,
}

/// `n` limiters on Valkey at `url`, one key prefix, instance ids from
/// `first_id`, a fleet size of [`INSTANCES`].
pub async fn fleet(url: &str, n: usize, first_id: usize) -> Fleet {
    let log = Log::new();
    let prefix = unique("fault");
    let mut limiters = Vec::new();
    for i in 0..n {
        let backend = ValkeyBackend::builder(url)
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("backend");
        limiters.push(log.limiter(rules(), backend, first_id + i, INSTANCES as u64));
    }
    Fleet { limiters, log }
}

/// `192.0.a.b`.
pub fn ip(a: u8, b: u8) -> IpAddr {
    IpAddr::from([192, 0, a, b])
}

/// An answer's latency in whole ms, rounded up.
pub fn ms(a: &Answer) -> u64 {
    a.latency_us.div_ceil(1000)
}

/// A fleet of one limiter, instance `id`.
pub async fn fleet_of_one(url: &str, id: usize) -> Fleet {
    fleet(url, 1, id).await
}

/// Requests that started and ended within `[from, to)` (start times are
/// whole ms rounded down, latencies rounded up: a request counted here
/// certainly ended before `to`).
pub fn within(answers: &[Answer], from: u64, to: u64) -> Vec<&Answer> {
    answers
        .iter()
        .filter(|a| a.start_ms >= from && a.start_ms + ms(a) < to)
        .collect()
}

/// How long from now until wall-clock `t` (Unix ms); zero if past.
pub fn until(t: u64) -> Duration {
    Duration::from_millis(t.saturating_sub(wall_ms()))
}
