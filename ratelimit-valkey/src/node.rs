//! One Valkey node: a multiplexed connection, its circuit breaker, and the
//! one pipelined round trip that carries a batch's checks.
//!
//! # NOSCRIPT
//!
//! Scripts are called with `EVALSHA` (loaded once per server). redis-rs
//! reloads a script on `NOSCRIPT` for a single call but not inside a
//! pipeline, so this module does it: the checks whose reply is `NOSCRIPT`
//! are sent again, after `SCRIPT LOAD`, in one more round trip (within the
//! same deadline). This does not break "never retry a rate-limit call": a
//! `NOSCRIPT` reply means the script did not run, so nothing was counted,
//! and the second send is the first time that check runs. A call that timed
//! out or failed is never sent again: it may have counted.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::backend::{BackendError, BackendErrorKind};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, ErrorKind, RedisError, Value};
use tokio::sync::Mutex;

use crate::breaker::Breaker;
use crate::metrics::{breaker_opened, error};
use crate::scripts::{Invocation, SOURCES};

/// One node: cheap to clone, clones share the connection and the breaker.
///
/// The connection is one multiplexed connection shared by every concurrent
/// request, so Valkey sees pipelined traffic. It is made on first use and
/// dropped on a transport error; the next call (a half-open probe, say)
/// connects afresh as part of its own deadline. Nothing is ever re-sent.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// `host:port`, for errors and metrics.
    pub(crate) addr: Arc<str>,
    client: Client,
    config: AsyncConnectionConfig,
    conn: Arc<Mutex<Option<MultiplexedConnection>>>,
    pub(crate) breaker: Arc<Breaker>,
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
    pub(crate) fn new(
        addr: impl Into<Arc<str>>,
        client: Client,
        connect_timeout: Duration,
        breaker: Breaker,
    ) -> Self {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(connect_timeout))
            .set_response_timeout(None);
        Self {
            addr: addr.into(),
            client,
            config,
            conn: Arc::new(Mutex::new(None)),
            breaker: Arc::new(breaker),
        }
    }

    /// The shared connection, connecting if there is none.
    pub(crate) async fn connection(&self) -> redis::RedisResult<MultiplexedConnection> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let c = self
            .client
            .get_multiplexed_async_connection_with_config(&self.config)
            .await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Forgets a broken connection.
    async fn forget(&self) {
        *self.conn.lock().await = None;
    }

    async fn round_trip(&self, invs: &[Invocation]) -> redis::RedisResult<Vec<Value>> {
        let mut conn = self.connection().await?;
        send(&mut conn, invs).await
    }

    /// A plain command to this node (management, not rate limiting), under
    /// the deadline and outside the breaker.
    pub(crate) async fn command(
        &self,
        cmd: &redis::Cmd,
        deadline: Duration,
    ) -> Result<Value, String> {
        let call = async {
            let mut conn = self.connection().await?;
            cmd.query_async::<Value>(&mut conn).await
        };
        match tokio::time::timeout(deadline, call).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if !matches!(e.kind(), ErrorKind::Server(_)) {
                    self.forget().await;
                }
                Err(e.to_string())
            }
            Err(_) => Err("timed out".into()),
        }
    }

    /// Sends `invs` in one pipelined round trip, under `deadline` and the
    /// breaker. Returns one raw reply per invocation, or why none came.
    pub(crate) async fn call(
        &self,
        invs: &[Invocation],
        deadline: Duration,
    ) -> Result<Vec<Value>, BackendError> {
        let Some(permit) = self.breaker.try_call() else {
            error(BackendErrorKind::BreakerOpen, invs.len());
            return Err(BackendError::new(
                BackendErrorKind::BreakerOpen,
                format!("node {} not called", self.addr),
            ));
        };
        let result = tokio::time::timeout(deadline, self.round_trip(invs)).await;
        let (out, up) = match result {
            Err(_) => (
                Err(BackendError::new(
                    BackendErrorKind::Timeout,
                    format!("node {} after {deadline:?}", self.addr),
                )),
                false,
            ),
            Ok(Err(e)) => {
                let (kind, up) = classify(&e);
                (
                    Err(BackendError::new(kind, format!("node {}: {e}", self.addr))),
                    up,
                )
            }
            Ok(Ok(values)) if values.len() != invs.len() => (
                Err(BackendError::new(
                    BackendErrorKind::Protocol,
                    format!("{} replies for {} calls", values.len(), invs.len()),
                )),
                true,
            ),
            Ok(Ok(values)) => (Ok(values), true),
        };
        if !up {
            self.forget().await;
        }
        if let Err(e) = &out {
            error(e.kind(), invs.len());
            tracing::debug!(node = %self.addr, error = %e, "valkey call failed");
        }
        if self.breaker.record(permit, up) {
            breaker_opened();
            tracing::warn!(node = %self.addr, "valkey circuit breaker opened");
        }
        out
    }
}

fn is_noscript(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.code() == "NOSCRIPT")
}

/// The round trip, with the NOSCRIPT reload described in the module docs.
async fn send(
    conn: &mut MultiplexedConnection,
    invs: &[Invocation],
) -> redis::RedisResult<Vec<Value>> {
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for inv in invs {
        pipe.add_command(inv.evalsha());
    }
    let mut values: Vec<Value> = pipe.query_async(conn).await?;
    let missing: Vec<usize> = (0..values.len().min(invs.len()))
        .filter(|&i| is_noscript(&values[i]))
        .collect();
    if missing.is_empty() {
        return Ok(values);
    }
    tracing::info!(count = missing.len(), "NOSCRIPT: loading the scripts");
    metrics::counter!("ratelimit_valkey_noscript_total").increment(1);
    let scripts: BTreeSet<usize> = missing.iter().map(|&i| invs[i].script).collect();
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for &s in &scripts {
        pipe.cmd("SCRIPT").arg("LOAD").arg(SOURCES[s.min(4)].1);
    }
    for &i in &missing {
        pipe.add_command(invs[i].evalsha());
    }
    let again: Vec<Value> = pipe.query_async(conn).await?;
    for (&i, v) in missing.iter().zip(again.into_iter().skip(scripts.len())) {
        values[i] = v;
    }
    Ok(values)
}
