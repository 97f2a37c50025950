//! Building a [`ValkeyBackend`] from a URL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::backend::{ClusterState, Inner, Topology, ValkeyBackend};
use crate::breaker::{Breaker, BreakerConfig, Monotonic, SystemMonotonic};
use crate::cluster::SlotMap;
use crate::node::Node;
use crate::scripts::TimeSource;
use crate::url::{addr_of, normalize_url, with_addr};
use crate::Error;

/// The default deadline of one call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(50);
/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "rl:";
/// How often the cluster's slot map is read again.
const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// Builds a [`ValkeyBackend`]: see [`ValkeyBackend::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ValkeyBuilder {
    urls: Vec<String>,
    prefix: String,
    deadline: Duration,
    connect_timeout: Duration,
    breaker: BreakerConfig,
    clock: Option<Arc<dyn Monotonic>>,
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
            breaker: BreakerConfig::default(),
            clock: None,
            injected_time: false,
            cluster: false,
        }
    }
}

/// Makes nodes (connecting on first use, never re-sending a request).
#[derive(Debug, Clone)]
pub(crate) struct NodeFactory {
    url: String,
    pub(crate) seeds: Vec<String>,
    pub(crate) connect_timeout: Duration,
    breaker: BreakerConfig,
    clock: Arc<dyn Monotonic>,
}

impl NodeFactory {
    fn breaker(&self) -> Breaker {
        Breaker::with_shared_clock(self.breaker, self.clock.clone())
    }

    /// A node at `addr` (`host:port`), connecting on first use.
    pub(crate) fn node(&self, addr: &str) -> Result<Node, redis::RedisError> {
        let client = redis::Client::open(with_addr(&self.url, addr))?;
        Ok(Node::new(
            addr,
            client,
            self.connect_timeout,
            self.breaker(),
        ))
    }

    async fn connected(&self, url: &str) -> Result<Node, Error> {
        let client = redis::Client::open(url)?;
        let node = Node::new(addr_of(url)?, client, self.connect_timeout, self.breaker());
        tokio::time::timeout(self.connect_timeout, node.connection())
            .await
            .map_err(|_| Error::Topology(format!("connecting to {url} timed out")))??;
        Ok(node)
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

    /// How long connecting may take when building, and for each
    /// reconnection attempt (default 2 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The breakers' thresholds (default: 5 consecutive failures open a
    /// node's breaker for 1 s).
    pub fn breaker(mut self, config: BreakerConfig) -> Self {
        self.breaker = config;
        self
    }

    /// The breakers' clock (default [`SystemMonotonic`]); tests pass a
    /// [`ManualMonotonic`](crate::breaker::ManualMonotonic).
    pub fn breaker_clock(mut self, clock: impl Monotonic) -> Self {
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

    /// Connects.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidUrl`] for a URL of another scheme, or unparsable.
    /// - [`Error::TlsDisabled`] for `rediss://` / `valkeys://` without the
    ///   `tls` feature.
    /// - [`Error::InvalidSetting`] for a zero deadline, zero breaker
    ///   failures, or a key prefix containing `{` or `}`.
    /// - [`Error::Connect`] when the node cannot be reached in time.
    /// - [`Error::Topology`] when no seed answers `CLUSTER SLOTS`.
    pub async fn build(self) -> Result<ValkeyBackend, Error> {
        if self.deadline.is_zero() {
            return Err(Error::InvalidSetting {
                name: "deadline",
                reason: "must be above zero",
            });
        }
        if self.breaker.failures == 0 {
            return Err(Error::InvalidSetting {
                name: "breaker",
                reason: "failures must be at least 1",
            });
        }
        if self.prefix.contains(['{', '}']) {
            return Err(Error::InvalidSetting {
                name: "key_prefix",
                reason: "must not contain { or }: the subject is the hash tag",
            });
        }
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
            breaker: self.breaker,
            clock: self
                .clock
                .unwrap_or_else(|| Arc::new(SystemMonotonic::default())),
        };
        let topology = if self.cluster {
            Topology::Cluster(cluster_state(factory).await?)
        } else {
            Topology::Single(Box::new(factory.connected(&first).await?))
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
            }),
        })
    }
}

async fn cluster_state(factory: NodeFactory) -> Result<Arc<ClusterState>, Error> {
    let state = Arc::new(ClusterState {
        map: RwLock::new(Arc::new(
            SlotMap::parse(&redis::Value::Array(Vec::new())).map_err(Error::Topology)?,
        )),
        nodes: Mutex::new(HashMap::new()),
        factory,
        stale: Arc::new(tokio::sync::Notify::new()),
    });
    state.refresh().await.map_err(Error::Topology)?;
    let weak = Arc::downgrade(&state);
    let stale = state.stale.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(REFRESH_EVERY) => {}
                _ = stale.notified() => {}
            }
            let Some(state) = weak.upgrade() else { return };
            if let Err(e) = state.refresh().await {
                tracing::warn!(error = %e, "cannot read the cluster's slots");
            }
            drop(state);
            // At most ten reads a second, whatever the redirects.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    Ok(state)
}
