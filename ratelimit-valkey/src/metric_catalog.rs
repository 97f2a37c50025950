//! The metrics `ratelimit-valkey` emits, with their labels and meaning (the types are
//! `ratelimit-core`'s; `ratelimit_admin::METRICS` lists every crate's).
//!
//! Every label has a bounded set of values: fixed kind, event and result names, and Valkey node addresses (the deployment's). No metric carries a client's
//! key, IP or any request value.

use ratelimit_core::{Metric, MetricKind, MetricSource};

use MetricKind::{Counter as C, Gauge as G, Histogram as H};

const NONE: &[&str] = &[];
const NODE: &[&str] = &["node"];

/// This crate's entries.
const M: MetricSource = MetricSource::new("ratelimit-valkey");

/// Every metric `ratelimit-valkey` emits.
pub const METRICS: &[Metric] = &[
    M.metric("ratelimit_valkey_errors_total", C, &["kind"], "Checks that got no answer from Valkey, by kind: timeout, connection, breaker_open, protocol."),
    M.metric("ratelimit_valkey_noscript_total", C, NONE, "Round trips that had to load the scripts (NOSCRIPT)."),
    M.metric("ratelimit_valkey_redirects_total", C, &["kind"], "Checks a cluster node redirected (moved, ask), each followed once."),
    M.metric("ratelimit_valkey_hash_key_total", C, &["event"], "The fleet's hash key in Valkey, by event: written_back (missing, this instance's written with SET NX), adopted (another key stored: this instance took it), conflict (the configured hash_key differs from the stored one)."),
    M.metric("ratelimit_control_version", G, NONE, "The published rule-set version this instance runs (the control channel's follower)."),
    M.metric("ratelimit_control_refused_total", C, NONE, "Published rule sets this instance refused to load (size, schema, validation); it kept its running set."),
    M.metric("ratelimit_control_lost", G, NONE, "1 while the control keys are gone from Valkey (restart without persistence) and the instance keeps its set, else 0."),
    M.metric("ratelimit_valkey_calls_total", C, &["node", "result"], "Pipelined round trips to a node, by result: ok, error, breaker_open."),
    M.metric("ratelimit_valkey_call_duration_seconds", H, NODE, "How long each round trip to a node took, answered or not."),
    M.metric("ratelimit_valkey_breaker_open_total", C, NODE, "Times the node's circuit breaker opened."),
    M.metric("ratelimit_valkey_breaker_open", G, NODE, "1 while the node's circuit breaker refuses calls, else 0."),
];

/// Registers the help text of each of [`METRICS`] on the installed
/// `metrics` recorder, and its counters without labels at 0
/// ([`Metric::describe`](ratelimit_core::Metric::describe)): call it once, after installing
/// the recorder.
///
/// # Examples
///
/// ```
/// // With a recorder installed (metrics-exporter-prometheus, for one):
/// ratelimit_valkey::describe_metrics();
/// assert!(ratelimit_valkey::METRICS.iter().all(|m| m.source == "ratelimit-valkey"));
/// ```
pub fn describe_metrics() {
    Metric::describe(METRICS);
}
