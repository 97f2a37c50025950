//! Shared by the control tests: a fleet of instances (limiter, control,
//! follower) on one real valkey-server.

#![allow(dead_code)]

pub(crate) mod guide_acl;

use std::time::{Duration, Instant};

use ratelimit_core::control::Published;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_valkey::control::{FollowConfig, Follower, ValkeyControl};
use ratelimit_valkey::ValkeyBackend;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A rule set with one rule `api` of `limit`, in `action`.
pub(crate) fn api_set(limit: u64, action: &str) -> String {
    format!(
        r#"[{{"id": "api", "expression": "true", "algorithm": "fixed_window",
            "limit": {limit}, "period": "1m", "key": ["ip"], "action": "{action}",
            "penalty": "10m"}}]"#
    )
}

/// One instance of the fleet.
pub(crate) struct Instance {
    pub(crate) id: String,
    pub(crate) limiter: Limiter,
    pub(crate) control: ValkeyControl,
    pub(crate) follower: Follower,
    /// The fleet size the limiter reads, kept by the follower.
    pub(crate) fleet: Arc<AtomicU64>,
}

/// Starts instance `id` on `url` under `prefix`, running `start` until it
/// follows a publish.
pub(crate) async fn instance(url: &str, prefix: &str, id: &str, start: &str) -> Instance {
    instance_reading(url, prefix, id, start, Published::SCHEMA).await
}

/// [`instance`], reading rule-set schema `schema` (an older build's when
/// lower than this one's).
pub(crate) async fn instance_reading(
    url: &str,
    prefix: &str,
    id: &str,
    start: &str,
    schema: u32,
) -> Instance {
    let backend = ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .build()
        .await
        .expect("backend");
    let fleet = Arc::new(AtomicU64::new(1));
    let limiter = Limiter::builder(RuleSet::from_json(start).expect("start set"))
        .backend(backend)
        .fleet_size(fleet.clone())
        .build();
    let control = ValkeyControl::open(url, prefix)
        .expect("control")
        .with_limiter(limiter.clone());
    let config = FollowConfig::new(id)
        .poll(Duration::from_millis(200))
        .report_every(Duration::from_millis(300))
        .schema(schema)
        .fleet_size(fleet.clone());
    let follower = control.follow(limiter.clone(), config);
    Instance {
        id: id.into(),
        limiter,
        control,
        follower,
        fleet,
    }
}

/// Three instances `a`, `b`, `c`.
pub(crate) async fn fleet(url: &str, prefix: &str) -> Vec<Instance> {
    let mut v = Vec::new();
    for id in ["a", "b", "c"] {
        v.push(instance(url, prefix, id, "[]").await);
    }
    v
}

/// Waits until `done` holds, up to `within`; panics naming `what`.
pub(crate) async fn wait_until(
    what: &str,
    within: Duration,
    mut done: impl FnMut() -> bool,
) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    start.elapsed()
}

/// The `q`-quantile of `v` (sorted in place).
pub(crate) fn quantile(v: &mut [Duration], q: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v[i]
}
