//! The metrics `ratelimit-nginx` emits, with their labels and meaning (the types are
//! `ratelimit-core`'s; `ratelimit_admin::METRICS` lists every crate's).
//!
//! Every label has a bounded set of values: fixed status and module names. No metric carries a client's
//! key, IP or any request value.

use ratelimit_core::{Metric, MetricKind, MetricSource};

use MetricKind::Counter as C;

/// This crate's entries.
const M: MetricSource = MetricSource::new("ratelimit-nginx");

/// Every metric `ratelimit-nginx` emits.
pub const METRICS: &[Metric] = &[
    M.metric("ratelimit_nginx_limit_req_total", C, &["status"], "limit_req outcomes, by $limit_req_status: PASSED, DELAYED, DELAYED_DRY_RUN, REJECTED, REJECTED_DRY_RUN."),
    M.metric("ratelimit_nginx_limit_conn_total", C, &["status"], "limit_conn outcomes, by $limit_conn_status: PASSED, REJECTED, REJECTED_DRY_RUN."),
    M.metric("ratelimit_nginx_zone_exhausted_total", C, &["module"], "Requests that found no free state in a zone, by module: limit_req, limit_conn."),
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
/// ratelimit_nginx::describe_metrics();
/// assert!(ratelimit_nginx::METRICS.iter().all(|m| m.source == "ratelimit-nginx"));
/// ```
pub fn describe_metrics() {
    Metric::describe(METRICS);
}
