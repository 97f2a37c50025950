//! Helpers of the tests of the documented nginx behaviour, with a
//! [`ManualClock`] (one test file per section of the nginx documentation):
//! zones and policies from pasted configuration, requests from an address,
//! bursts at the clock's time.
#![allow(dead_code, unreachable_pub)]

pub use std::time::Duration;

pub use ratelimit_core::{Clock, ManualClock, RequestAttrs};
pub use ratelimit_nginx::{
    Level, LimitConnPolicy, LimitReqPolicy, LimitReqStatus, NginxConfig, ReqDecision, ZoneRegistry,
    Zones,
};

/// 2026-01-01T00:00:00Z.
pub const T0: u64 = 1_767_225_600_000;

pub fn clock() -> ManualClock {
    ManualClock::new(T0)
}

pub fn zones(config: &str) -> Zones {
    let config = NginxConfig::parse(config).unwrap_or_else(|e| panic!("config: {e}"));
    ZoneRegistry::new()
        .load(&config)
        .unwrap_or_else(|e| panic!("zones: {e}"))
}

pub fn req_policy(config: &str, level: &str) -> LimitReqPolicy {
    let level = Level::parse(level).unwrap_or_else(|e| panic!("level: {e}"));
    zones(config)
        .limit_req(&level)
        .unwrap_or_else(|e| panic!("policy: {e}"))
}

pub fn conn_policy(config: &str, level: &str) -> LimitConnPolicy {
    let level = Level::parse(level).unwrap_or_else(|e| panic!("level: {e}"));
    zones(config)
        .limit_conn(&level)
        .unwrap_or_else(|e| panic!("policy: {e}"))
}

pub fn from(ip: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}")))
}

/// Sends `n` requests at the clock's time; returns each (status, delay in ms).
pub fn burst_of(
    policy: &LimitReqPolicy,
    req: &RequestAttrs,
    clock: &ManualClock,
    n: usize,
) -> Vec<(Option<LimitReqStatus>, u128)> {
    (0..n)
        .map(|_| {
            let d: ReqDecision = policy.check(req, clock.now_ms());
            (d.status(), d.delay().as_millis())
        })
        .collect()
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
