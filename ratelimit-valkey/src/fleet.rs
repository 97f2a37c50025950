//! The live fleet size for `fail_mode: local`.
//!
//! Each instance announces itself in Valkey: a member of one sorted set,
//! scored with Valkey's `TIME`, refreshed every `refresh` by a tokio task;
//! members silent for longer than `ttl` are dropped, and the set itself
//! expires when nobody refreshes it. The same call reads the count into a
//! an `Arc<AtomicU64>` that the core's limiter reads. While Valkey is down the
//! last known count is kept. Before the first answer the fleet is the
//! static `expected` count (`EXPECTED_REPLICAS`); the count never goes below
//! `floor` (default 1).
//!
//! # Examples
//!
//! ```no_run
//! # async fn demo() -> Result<(), ratelimit_valkey::Error> {
//! use ratelimit_valkey::{FleetConfig, ValkeyBackend};
//!
//! let backend = ValkeyBackend::builder("valkey://127.0.0.1:6379").build().await?;
//! let fleet = backend.live_fleet(FleetConfig::new("edge-1", 4));
//! // Hand `fleet.shared()` to `LimiterBuilder::fleet_size`.
//! let _size = fleet.shared();
//! # Ok(()) }
//! ```

use std::time::Duration;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::{Topology, ValkeyBackend};

/// KEYS[1] the fleet's sorted set; ARGV[1] this instance; ARGV[2] ttl ms.
/// Announces the instance, drops silent ones, returns the count.
const ANNOUNCE: &str = r"
assert(#KEYS == 1 and #ARGV == 2, 'announce expects 1 key and 2 arguments')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - ttl))
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZCARD', KEYS[1])
";

/// How an instance announces itself.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FleetConfig {
    /// This instance's unique name (host name, pod name).
    pub instance: String,
    /// The expected count, used until Valkey first answers.
    pub expected: u64,
    /// The least count ever reported.
    pub floor: u64,
    /// An instance silent this long no longer counts (default 15 s).
    pub ttl: Duration,
    /// How often to announce and read (default 5 s).
    pub refresh: Duration,
}

impl FleetConfig {
    /// Instance `instance`, `expected` instances until Valkey answers.
    pub fn new(instance: impl Into<String>, expected: u64) -> Self {
        Self {
            instance: instance.into(),
            expected: expected.max(1),
            floor: 1,
            ttl: Duration::from_secs(15),
            refresh: Duration::from_secs(5),
        }
    }

    /// Sets the least count reported.
    #[must_use]
    pub fn floor(mut self, floor: u64) -> Self {
        self.floor = floor.max(1);
        self
    }

    /// Sets how long a silent instance still counts.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets how often to announce.
    #[must_use]
    pub fn refresh(mut self, every: Duration) -> Self {
        self.refresh = every;
        self
    }
}

/// A running announcement; the task stops when this is dropped.
#[derive(Debug)]
pub struct LiveFleet {
    fleet: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl LiveFleet {
    /// The live count, for `LimiterBuilder::fleet_size`.
    pub fn shared(&self) -> Arc<AtomicU64> {
        self.fleet.clone()
    }
}

impl Drop for LiveFleet {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ValkeyBackend {
    /// Announces this instance every `config.refresh` and keeps the fleet's
    /// live count. Must be called within a tokio runtime.
    pub fn live_fleet(&self, config: FleetConfig) -> LiveFleet {
        let fleet = Arc::new(AtomicU64::new(config.expected.max(config.floor)));
        let shared = fleet.clone();
        let backend = self.clone();
        let task = tokio::spawn(async move {
            let key = format!("{}{{fleet}}", backend.inner.prefix);
            loop {
                match backend.announce(&key, &config).await {
                    Ok(n) => shared.store(n.max(config.floor), Ordering::SeqCst),
                    Err(e) => {
                        tracing::debug!(error = %e, "fleet announce failed; keeping the last count")
                    }
                }
                tokio::time::sleep(config.refresh).await;
            }
        });
        LiveFleet { fleet, task }
    }

    async fn announce(&self, key: &str, config: &FleetConfig) -> Result<u64, String> {
        let ttl_ms = u64::try_from(config.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(ANNOUNCE)
            .arg(1)
            .arg(key)
            .arg(&config.instance)
            .arg(ttl_ms);
        let node = match &self.inner.topology {
            Topology::Single(node) => (**node).clone(),
            Topology::Cluster(state) => {
                let map = state.map();
                let addr = map
                    .node_of(crate::cluster::slot(key.as_bytes()))
                    .ok_or("fleet slot not served")?;
                state.node(addr).map_err(|e| e.to_string())?
            }
        };
        let deadline = self.inner.deadline.max(Duration::from_millis(500));
        match node.command(&cmd, deadline).await? {
            redis::Value::Int(n) => u64::try_from(n).map_err(|e| e.to_string()),
            other => Err(format!("unexpected reply {other:?}")),
        }
    }
}
