//! Shared helpers for the pipeline tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

pub const T0: u64 = 1_767_225_600_000;

/// The memory backend behind the testkit's counting [`Probe`].
pub use ratelimit_testkit::scenarios::Probe;

pub fn rules(json: &str) -> RuleSet {
    RuleSet::from_json_at(json, T0).expect("valid rules")
}

pub fn limiter(json: &str) -> (Limiter, ManualClock, Arc<Probe>) {
    let clock = ManualClock::new(T0);
    let probe = Arc::new(Probe::new(Arc::new(MemoryBackend::default())));
    let l = Limiter::builder(rules(json))
        .clock(clock.clone())
        .backend(probe.clone())
        .build();
    (l, clock, probe)
}

pub fn req(ip: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().expect("ip")).with_path(path)
}

/// A rule object with the given id, expression and extra fields.
pub fn rule(id: &str, expr: &str, extra: &str) -> String {
    let expr = serde_json_escape(expr);
    format!(
        r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "fixed_window", "limit": 2,
        "period": "1m", "key": ["ip"]{extra}}}"#
    )
}

fn serde_json_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
