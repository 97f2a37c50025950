//! The backend's metrics, through the `metrics` facade.
//!
//! - `ratelimit_valkey_errors_total{kind}`: checks that got no answer, by
//!   kind: `timeout`, `connection`, `breaker_open`, `protocol`.
//! - `ratelimit_valkey_noscript_total`: round trips that had to load scripts.
//! - `ratelimit_valkey_redirects_total{kind}`: checks a cluster node
//!   redirected (`moved`, `ask`), each followed once.
//! - `ratelimit_valkey_hash_key_total{event}`: the fleet's hash key
//!   checks that found something (see [`crate::hashkey`]): `written_back`
//!   (none was stored: this instance's written back), `adopted` (another
//!   was stored: this instance took it), `conflict` (the configured key
//!   differs from the stored one: kept; counted at each check).
//!
//! Per node (label `node`, the node's `host:port`: one value per node of
//! the deployment, never anything a client sends):
//!
//! - `ratelimit_valkey_breaker_open_total{node}`: times the node's breaker
//!   opened.
//! - `ratelimit_valkey_breaker_open{node}`: 1 while the node's breaker
//!   refuses calls (open or half-open), else 0.
//! - `ratelimit_valkey_calls_total{node, result}`: pipelined round trips,
//!   by result: `ok`, `error`, `breaker_open`.
//! - `ratelimit_valkey_call_duration_seconds{node}`: how long each round
//!   trip that was sent took (answered, failed or timed out), as a
//!   histogram.

use std::time::Duration;

use metrics::{Counter, Gauge, Histogram};
use ratelimit_core::backend::BackendErrorKind;

/// The `kind` label of an error.
pub(crate) fn kind_label(kind: BackendErrorKind) -> &'static str {
    match kind {
        BackendErrorKind::Timeout => "timeout",
        BackendErrorKind::Connection => "connection",
        BackendErrorKind::BreakerOpen => "breaker_open",
        _ => "protocol",
    }
}

/// Counts `n` checks that failed with `kind`.
pub(crate) fn error(kind: BackendErrorKind, n: usize) {
    metrics::counter!("ratelimit_valkey_errors_total", "kind" => kind_label(kind))
        .increment(n as u64);
}

/// One node's metrics, registered once when the node starts.
#[derive(Debug)]
pub(crate) struct NodeMetrics {
    opened: Counter,
    open: Gauge,
    ok: Counter,
    failed: Counter,
    refused: Counter,
    duration: Histogram,
}

impl NodeMetrics {
    pub(crate) fn new(addr: &str) -> Self {
        let node = addr.to_owned();
        let calls = |result: &'static str| metrics::counter!("ratelimit_valkey_calls_total", "node" => node.clone(), "result" => result);
        let m = Self {
            opened: metrics::counter!("ratelimit_valkey_breaker_open_total", "node" => node.clone()),
            open: metrics::gauge!("ratelimit_valkey_breaker_open", "node" => node.clone()),
            ok: calls("ok"),
            failed: calls("error"),
            refused: calls("breaker_open"),
            duration: metrics::histogram!("ratelimit_valkey_call_duration_seconds", "node" => node.clone()),
        };
        m.open.set(0.0);
        m
    }

    /// A call the breaker refused.
    pub(crate) fn refused(&self) {
        self.refused.increment(1);
    }

    /// A round trip that was sent and took `took`.
    pub(crate) fn sent(&self, took: Duration) {
        self.duration.record(took.as_secs_f64());
    }

    /// A call's result.
    pub(crate) fn result(&self, ok: bool) {
        if ok { &self.ok } else { &self.failed }.increment(1);
    }

    /// The breaker opened.
    pub(crate) fn breaker_opened(&self) {
        self.opened.increment(1);
        self.open.set(1.0);
    }

    /// The breaker closed again.
    pub(crate) fn breaker_closed(&self) {
        self.open.set(0.0);
    }
}

/// Counts one check redirected by a cluster node.
pub(crate) fn redirected(ask: bool) {
    let kind = if ask { "ask" } else { "moved" };
    metrics::counter!("ratelimit_valkey_redirects_total", "kind" => kind).increment(1);
}

/// Counts one hash key check that found something (`event`).
pub(crate) fn hash_key_event(event: &'static str) {
    metrics::counter!("ratelimit_valkey_hash_key_total", "event" => event).increment(1);
}
