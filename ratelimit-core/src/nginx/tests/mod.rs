//! Tests of the [`crate::nginx`] docs' sentences, with a [`ManualClock`]: one
//! file per section.

mod burst;
mod capture;
mod limited;
mod memory;
mod parser;
mod proptests;
mod zones;

use std::time::Duration;

use super::{
    Level, LimitConnPolicy, LimitReqPolicy, LimitReqStatus, NginxConfig, ReqDecision, ZoneRegistry,
    Zones,
};
use crate::{Clock, ManualClock, RequestAttrs};

/// 2026-01-01T00:00:00Z.
pub(super) const T0: u64 = 1_767_225_600_000;

pub(super) fn clock() -> ManualClock {
    ManualClock::new(T0)
}

pub(super) fn zones(config: &str) -> Zones {
    let config = NginxConfig::parse(config).unwrap_or_else(|e| panic!("config: {e}"));
    ZoneRegistry::new()
        .load(&config)
        .unwrap_or_else(|e| panic!("zones: {e}"))
}

pub(super) fn req_policy(config: &str, level: &str) -> LimitReqPolicy {
    let level = Level::parse(level).unwrap_or_else(|e| panic!("level: {e}"));
    zones(config)
        .limit_req(&level)
        .unwrap_or_else(|e| panic!("policy: {e}"))
}

pub(super) fn conn_policy(config: &str, level: &str) -> LimitConnPolicy {
    let level = Level::parse(level).unwrap_or_else(|e| panic!("level: {e}"));
    zones(config)
        .limit_conn(&level)
        .unwrap_or_else(|e| panic!("policy: {e}"))
}

pub(super) fn from(ip: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}")))
}

/// Sends `n` requests at the clock's time; returns each (status, delay in ms).
pub(super) fn burst_of(
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

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
