//! The metrics `ratelimit-tower` emits, with their labels and meaning (the types are
//! `ratelimit-core`'s; `ratelimit_admin::METRICS` lists every crate's).
//!
//! Every label has a bounded set of values: fixed outcome names and status classes. No metric carries a client's
//! key, IP or any request value.

use ratelimit_core::{Metric, MetricKind, MetricSource};

use MetricKind::Counter as C;

/// This crate's entries.
const M: MetricSource = MetricSource::new("ratelimit-tower");

/// Every metric `ratelimit-tower` emits.
pub const METRICS: &[Metric] = &[
    M.metric("ratelimit_decisions_total", C, &["outcome"], "Requests through the tower layer, by outcome: forward, limited, unavailable, bad_request, other."),
    M.metric("ratelimit_responses_total", C, &["status_class"], "Responses through the tower layer, by status class: 1xx to 5xx."),
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
/// ratelimit_tower::describe_metrics();
/// assert!(ratelimit_tower::METRICS.iter().all(|m| m.source == "ratelimit-tower"));
/// ```
pub fn describe_metrics() {
    Metric::describe(METRICS);
}
