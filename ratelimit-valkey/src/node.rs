//! One Valkey node: its connections, its circuit breaker, and the one
//! pipelined round trip that carries a batch's checks.
//!
//! # NOSCRIPT
//!
//! Scripts are called with `EVALSHA` (loaded once per server). redis-rs
//! reloads a script on `NOSCRIPT` for a single call but not inside a
//! pipeline, so this module does it: the script calls (see [`crate::call`])
//! whose reply is `NOSCRIPT` are sent again, after `SCRIPT LOAD` of their
//! scripts (an algorithm's or the batch script), in one more round trip
//! (within the same deadline). This does not break "never retry a
//! rate-limit call": a `NOSCRIPT` reply means the script did not run, so
//! nothing was counted, and the second send is the first time those checks
//! run. A call that timed out or failed is never sent again: it may have
//! counted.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::Clock;

use ratelimit_core::backend::{BackendError, BackendErrorKind};
use redis::aio::MultiplexedConnection;
use redis::{ErrorKind, RedisError, Value};
use tokio::sync::Notify;

use crate::breaker::{Breaker, BreakerConfig, Permit};
use crate::call::Call;
use crate::link::Link;
use crate::metrics::{error, NodeMetrics};
use crate::pool::{describe, Connector, Lease, Pool};
use crate::scripts::SOURCES;
use crate::url::with_addr;

/// One node: cheap to clone, clones share the connections and the breaker.
///
/// The node keeps a small fixed set of multiplexed connections (see
/// [`crate::pool`]), each made and remade in the background; concurrent
/// requests share them, so Valkey sees pipelined traffic. Nothing is ever
/// re-sent.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// `host:port`, for errors and metrics.
    pub(crate) addr: Arc<str>,
    pool: Arc<Pool>,
    connect_timeout: Duration,
    pub(crate) breaker: Arc<Breaker>,
    metrics: Arc<NodeMetrics>,
}

/// Whether the node answered: a server's error still means it is up.
fn classify(e: &RedisError) -> (BackendErrorKind, bool) {
    if e.is_timeout() {
        (BackendErrorKind::Timeout, false)
    } else if matches!(e.kind(), ErrorKind::Server(_)) {
        (BackendErrorKind::Protocol, true)
    } else {
        (BackendErrorKind::Connection, false)
    }
}

impl Node {
    /// A node whose `connections` start connecting at once, in the
    /// background. Must be called within a tokio runtime.
    /// Each restore of its link wakes `restored` (see [`crate::link`]).
    pub(crate) fn start(
        addr: impl Into<Arc<str>>,
        client: redis::Client,
        connect_timeout: Duration,
        breaker: Breaker,
        connections: usize,
        restored: Arc<Notify>,
    ) -> Self {
        let addr = addr.into();
        let breaker = Arc::new(breaker);
        let pool = Pool::start(
            Connector {
                client,
                connect_timeout,
                breaker: breaker.clone(),
                link: Arc::new(Link::new(addr.clone(), restored)),
            },
            connections,
        );
        Self {
            metrics: Arc::new(NodeMetrics::new(&addr)),
            addr,
            pool: Arc::new(pool),
            connect_timeout,
            breaker,
        }
    }

    /// `valkey at <addr>: <what>`.
    pub(crate) fn says(&self, what: impl std::fmt::Display) -> String {
        format!("valkey at {}: {what}", self.addr)
    }

    /// Waits, at most `within`, until each connection has tried once.
    pub(crate) async fn first_attempts(&self, within: Duration) {
        self.pool.first_attempts(within).await;
    }

    /// Whether a connection is up.
    pub(crate) fn is_connected(&self) -> bool {
        self.pool.is_connected()
    }

    /// Why the node has no connection (or `connected`).
    pub(crate) fn status(&self) -> String {
        match self.pool.pick() {
            Ok(_) => self.says("connected"),
            Err(why) => self.says(why),
        }
    }

    /// A plain command to this node (management, not rate limiting), under
    /// the deadline and outside the breaker. With no connection up, it
    /// wakes the connections and waits for one within the deadline.
    pub(crate) async fn command(
        &self,
        cmd: &redis::Cmd,
        deadline: Duration,
    ) -> Result<Value, String> {
        let call = async {
            let mut lease = match self.pool.pick() {
                Ok(lease) => lease,
                Err(_) => self
                    .pool
                    .wait_connected(deadline)
                    .await
                    .map_err(|why| self.says(why))?,
            };
            let r = cmd.query_async::<Value>(&mut lease.conn).await;
            if let Err(e) = &r {
                if classify(e).0 == BackendErrorKind::Connection {
                    self.pool.broken(&lease, &describe(e));
                }
            }
            r.map_err(|e| self.says(describe(&e)))
        };
        match tokio::time::timeout(deadline, call).await {
            Ok(r) => r,
            Err(_) => Err(self.says(format!("no answer within {deadline:?}"))),
        }
    }

    /// The connection for a call: the next one up; none up, the breaker's
    /// probe wakes one and waits for it within `within` (what its deadline
    /// leaves, never the connect time-out: the attempt goes on in the
    /// background), any other call fails at once.
    async fn lease(&self, permit: &Permit, within: Duration) -> Result<Lease, String> {
        match self.pool.pick() {
            Ok(lease) => Ok(lease),
            Err(_) if permit.is_probe() => self
                .pool
                .wait_connected(within.min(self.connect_timeout))
                .await
                .map_err(|why| self.says(format!("not connected: {why}"))),
            Err(why) => Err(self.says(format!("not connected: {why}"))),
        }
    }

    /// Sends `calls` in one pipelined round trip, under `deadline` and the
    /// breaker; with `asking`, each after `ASKING` (a cluster's `ASK`
    /// redirect). Returns one raw reply per call, or why none came.
    pub(crate) async fn call(
        &self,
        calls: &[Call],
        deadline: Duration,
        asking: bool,
    ) -> Result<Vec<Value>, BackendError> {
        let checks: usize = calls.iter().map(|c| c.invs.len()).sum();
        let Some(permit) = self.breaker.try_call() else {
            error(BackendErrorKind::BreakerOpen, checks);
            self.metrics.refused();
            return Err(BackendError::new(
                BackendErrorKind::BreakerOpen,
                self.says("not called"),
            ));
        };
        let called = std::time::Instant::now();
        let (out, up) = match self.lease(&permit, deadline).await {
            Err(why) => (
                Err(BackendError::new(BackendErrorKind::Connection, why)),
                false,
            ),
            Ok(mut lease) => {
                let started = std::time::Instant::now();
                // A probe that waited for its connection has what is left.
                let left = deadline.saturating_sub(called.elapsed());
                let result = tokio::time::timeout(left, send(&mut lease.conn, calls, asking)).await;
                self.metrics.sent(started.elapsed());
                match result {
                    Err(_) => {
                        self.pool.suspect(&lease);
                        (
                            Err(BackendError::new(
                                BackendErrorKind::Timeout,
                                self.says(format!("no answer within {deadline:?}")),
                            )),
                            false,
                        )
                    }
                    Ok(Err(e)) => {
                        let (kind, up) = classify(&e);
                        match kind {
                            BackendErrorKind::Connection => self.pool.broken(&lease, &describe(&e)),
                            BackendErrorKind::Timeout => self.pool.suspect(&lease),
                            _ => {}
                        }
                        (Err(BackendError::new(kind, self.says(describe(&e)))), up)
                    }
                    Ok(Ok(values)) if values.len() != calls.len() => (
                        Err(BackendError::new(
                            BackendErrorKind::Protocol,
                            self.says(format!(
                                "{} replies for {} calls",
                                values.len(),
                                calls.len()
                            )),
                        )),
                        true,
                    ),
                    Ok(Ok(values)) => (Ok(values), true),
                }
            }
        };
        if let Err(e) = &out {
            error(e.kind(), checks);
            tracing::debug!(node = %self.addr, error = %e, "valkey call failed");
        }
        self.metrics.result(out.is_ok());
        let closes = permit.is_probe() && up;
        if self.breaker.record(permit, up) {
            self.metrics.breaker_opened();
            tracing::warn!(node = %self.addr, "valkey circuit breaker opened");
        }
        if closes {
            // Closed again: the other connections may reconnect now.
            self.metrics.breaker_closed();
            self.pool.wake_all();
        }
        out
    }
}

fn is_noscript(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.code() == "NOSCRIPT")
}

/// Adds `call` to `pipe`, after an `ASKING` whose reply is dropped.
fn add(pipe: &mut redis::Pipeline, call: &Call, asking: bool) {
    if asking {
        pipe.cmd("ASKING").ignore();
    }
    pipe.add_command(call.evalsha());
}

/// The round trip, with the NOSCRIPT reload described in the module docs.
async fn send(
    conn: &mut MultiplexedConnection,
    calls: &[Call],
    asking: bool,
) -> redis::RedisResult<Vec<Value>> {
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for call in calls {
        add(&mut pipe, call, asking);
    }
    let mut values: Vec<Value> = pipe.query_async(conn).await?;
    let missing: Vec<usize> = (0..values.len().min(calls.len()))
        .filter(|&i| is_noscript(&values[i]))
        .collect();
    if missing.is_empty() {
        return Ok(values);
    }
    tracing::info!(count = missing.len(), "NOSCRIPT: loading the scripts");
    metrics::counter!("ratelimit_valkey_noscript_total").increment(1);
    let scripts: BTreeSet<usize> = missing.iter().map(|&i| calls[i].script()).collect();
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for &s in &scripts {
        pipe.cmd("SCRIPT")
            .arg("LOAD")
            .arg(SOURCES[s.min(SOURCES.len() - 1)]);
    }
    for &i in &missing {
        add(&mut pipe, &calls[i], asking);
    }
    let again: Vec<Value> = pipe.query_async(conn).await?;
    for (&i, v) in missing.iter().zip(again.into_iter().skip(scripts.len())) {
        values[i] = v;
    }
    Ok(values)
}

/// Makes nodes (connecting in the background, never re-sending a request).
#[derive(Debug, Clone)]
pub(crate) struct NodeFactory {
    pub(crate) url: String,
    pub(crate) seeds: Vec<String>,
    pub(crate) connect_timeout: Duration,
    pub(crate) connections: usize,
    pub(crate) breaker: BreakerConfig,
    pub(crate) clock: Arc<dyn Clock>,
    /// Woken when any node's link is restored (the hash key check waits).
    pub(crate) restored: Arc<tokio::sync::Notify>,
}

impl NodeFactory {
    /// A node at `addr` (`host:port`), starting to connect in the
    /// background. Must be called within a tokio runtime.
    pub(crate) fn node(&self, addr: &str) -> Result<Node, redis::RedisError> {
        let client = redis::Client::open(with_addr(&self.url, addr))?;
        Ok(Node::start(
            addr,
            client,
            self.connect_timeout,
            Breaker::with_shared_clock(self.breaker, self.clock.clone()),
            self.connections,
            self.restored.clone(),
        ))
    }
}
