//! Building a [`ValkeyBackend`] from a URL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ratelimit_core::{Clock, HashKey, TokioClock};

use crate::backend::{Inner, Topology, ValkeyBackend};
use crate::breaker::BreakerConfig;
use crate::cluster::{ClusterState, SlotMap};
use crate::hashkey::{FleetKey, NAME};
use crate::node::NodeFactory;
use crate::pool::default_connections;
use crate::scripts::TimeSource;
use crate::start;
use crate::url::{addr_of, normalize_url};
use crate::Error;

/// The default deadline of one call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(50);
/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "rl:";

/// Builds a [`ValkeyBackend`]: see [`ValkeyBackend::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ValkeyBuilder {
    urls: Vec<String>,
    prefix: String,
    deadline: Duration,
    connect_timeout: Duration,
    connections: usize,
    require_connection: bool,
    hash_key: Option<HashKey>,
    breaker: BreakerConfig,
    clock: Option<Arc<dyn Clock>>,
    injected_time: bool,
    cluster: bool,
}

impl ValkeyBackend {
    /// A builder for a backend at `url`: `redis://`, `rediss://`,
    /// `valkey://` or `valkeys://` (the last two are mapped to the first
    /// two), e.g. `valkey://127.0.0.1:6379`. In cluster mode, `url` is a
    /// seed node.
    pub fn builder(url: impl Into<String>) -> ValkeyBuilder {
        ValkeyBuilder {
            urls: vec![url.into()],
            prefix: DEFAULT_PREFIX.into(),
            deadline: DEFAULT_DEADLINE,
            connect_timeout: Duration::from_secs(2),
            connections: default_connections(),
            require_connection: false,
            hash_key: None,
            breaker: BreakerConfig::default(),
            clock: None,
            injected_time: false,
            cluster: false,
        }
    }
}

impl ValkeyBuilder {
    /// The key prefix (default `rl:`): keys are `<prefix>{<subject>}<namespace>`, see [`crate::key_of`].
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The deadline of one call (default 50 ms). A call past it answers
    /// `Timeout` for its checks and is not retried.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How long one connection attempt may take (default 2 s), which is
    /// also how long [`build`](Self::build) waits for the first attempts.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Multiplexed connections per node, chosen round robin; each
    /// request's pipeline goes on one of them. Each is remade in the
    /// background on its own when it breaks. The default is one per core
    /// the process may run on, at least 2 and at most 4: more than the
    /// cores only split the requests in flight into smaller pipelines,
    /// which cost the server more per call.
    pub fn connections(mut self, n: usize) -> Self {
        self.connections = n;
        self
    }

    /// Whether [`build`](Self::build) fails when Valkey cannot be reached
    /// within the connect time-out (default `false`: the backend is built
    /// anyway, connects in the background, and until it does, checks fail
    /// with a `Connection` error so the rules' fail modes answer).
    pub fn require_connection(mut self, on: bool) -> Self {
        self.require_connection = on;
        self
    }

    /// The fleet's secret hash key, explicitly (the same on every
    /// instance): recommended in production, from the service's
    /// configuration. By default the key stored in Valkey at
    /// `<prefix>hashkey` is used (the first instance stores a random
    /// one), and instances converge on it after Valkey restarts without
    /// persistence, counting a client apart until they do: see
    /// [`HashKey`] and the guide's
    /// [hash key](crate::guide::valkey#the-fleets-hash-key) section. Set
    /// here, the key is always used and never written to Valkey; a stored
    /// key that differs is logged at `WARN` and counted (a key set only
    /// on the limiter still needs the backend to read its own before
    /// checks go out).
    pub fn hash_key(mut self, key: HashKey) -> Self {
        self.hash_key = Some(key);
        self
    }

    /// The breakers' thresholds (default: 5 consecutive failures open a
    /// node's breaker for 1 s).
    pub fn breaker(mut self, config: BreakerConfig) -> Self {
        self.breaker = config;
        self
    }

    /// The breakers' clock (default a [`TokioClock`], which never goes
    /// back); tests pass a [`ManualClock`](ratelimit_core::ManualClock).
    pub fn breaker_clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// Use `Batch::now_ms` instead of Valkey `TIME` (default off): for
    /// tests and the conformance runner, which drive time.
    pub fn injected_time(mut self, on: bool) -> Self {
        self.injected_time = on;
        self
    }

    /// Valkey Cluster mode (default off): the URL is a seed node.
    pub fn cluster(mut self, on: bool) -> Self {
        self.cluster = on;
        self
    }

    /// More seed nodes for cluster mode.
    pub fn cluster_seeds<I, S>(mut self, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.urls.extend(urls.into_iter().map(Into::into));
        self
    }

    /// Builds the backend and starts connecting, in the background.
    ///
    /// `build` waits, at most the connect time-out, for the first attempt
    /// of each connection, for the hash key to be read and, in cluster
    /// mode, for the slot map. Without
    /// [`require_connection`](Self::require_connection) it succeeds even
    /// when Valkey is down: a service whose rules fail open can start
    /// during an outage, and the backend connects when Valkey is back.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidUrl`] for a URL of another scheme, or unparsable.
    /// - [`Error::TlsDisabled`] for `rediss://` / `valkeys://` without the
    ///   `tls` feature.
    /// - [`Error::InvalidSetting`] for a zero deadline or connect time-out,
    ///   zero connections, zero breaker failures, or a key prefix
    ///   containing `{` or `}`.
    /// - With `require_connection`: [`Error::Connect`] (naming the node's
    ///   address) when no connection or no hash key could be had, and
    ///   [`Error::Topology`] when no seed answered `CLUSTER SLOTS`.
    pub async fn build(self) -> Result<ValkeyBackend, Error> {
        self.validate()?;
        let urls = self
            .urls
            .iter()
            .map(|u| normalize_url(u))
            .collect::<Result<Vec<_>, _>>()?;
        let first = urls.first().cloned().unwrap_or_default();
        let factory = NodeFactory {
            url: first.clone(),
            seeds: urls.iter().map(|u| addr_of(u)).collect::<Result<_, _>>()?,
            connect_timeout: self.connect_timeout,
            connections: self.connections,
            breaker: self.breaker,
            clock: self.clock.unwrap_or_else(|| Arc::new(TokioClock::new())),
            restored: Arc::new(tokio::sync::Notify::new()),
        };
        let key = Arc::new(FleetKey::new(self.hash_key));
        let name = format!("{}{NAME}", self.prefix);
        let wait = self.connect_timeout;
        let topology = if self.cluster {
            let state = Arc::new(ClusterState {
                map: RwLock::new(Arc::new(SlotMap::empty())),
                nodes: Mutex::new(HashMap::new()),
                factory,
                stale: Arc::new(tokio::sync::Notify::new()),
                suspected: Mutex::new(None),
            });
            let progress = start::cluster(&state, key.clone(), name);
            start::settle_cluster(&state, progress, &key, wait, self.require_connection).await?;
            Topology::Cluster(state)
        } else {
            let addr = factory.seeds.first().cloned().unwrap_or_default();
            let node = factory.node(&addr).map_err(|e| Error::InvalidUrl {
                url: first.clone(),
                reason: e.to_string(),
            })?;
            let restored = factory.restored.clone();
            let progress = start::single(node.clone(), key.clone(), name, wait, restored);
            start::settle_single(&node, progress, &key, wait, self.require_connection).await?;
            Topology::Single(Box::new(node))
        };
        Ok(ValkeyBackend {
            inner: Arc::new(Inner {
                prefix: self.prefix,
                deadline: self.deadline,
                time: if self.injected_time {
                    TimeSource::Injected
                } else {
                    TimeSource::Valkey
                },
                topology,
                key,
            }),
        })
    }

    fn validate(&self) -> Result<(), Error> {
        let invalid = |name, reason| Err(Error::InvalidSetting { name, reason });
        if self.deadline.is_zero() {
            return invalid("deadline", "must be above zero");
        }
        if self.connect_timeout.is_zero() {
            return invalid("connect_timeout", "must be above zero");
        }
        if self.connections == 0 {
            return invalid("connections", "must be at least 1");
        }
        if self.breaker.failures == 0 {
            return invalid("breaker", "failures must be at least 1");
        }
        if self.prefix.contains(['{', '}']) {
            return invalid(
                "key_prefix",
                "must not contain { or }: the subject is the hash tag",
            );
        }
        Ok(())
    }
}
