//! The metrics this crate emits, with their labels and meaning, and the
//! catalogue's types, which the other crates of the workspace use for
//! theirs (`ratelimit_valkey::METRICS`, `ratelimit_tower::METRICS`,
//! `ratelimit_nginx::METRICS`; `ratelimit_admin::METRICS` lists them all).
//!
//! [`describe_metrics`] gives each of [`METRICS`] its help text on the
//! installed `metrics` recorder, so a Prometheus scrape carries `# HELP`
//! lines. Every label has a bounded set of values: rule ids (from the rule
//! set), fixed outcome names and switch names. No metric carries a
//! client's key, IP or any request value.

/// What kind of metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricKind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// A distribution (seconds).
    Histogram,
}

/// One metric of a crate's catalogue.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Metric {
    /// The name, as the crate registers it (`ratelimit_*`).
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: MetricKind,
    /// Its labels.
    pub labels: &'static [&'static str],
    /// The crate that emits it.
    pub source: &'static str,
    /// What it counts.
    pub help: &'static str,
}

impl Metric {
    /// A catalogue entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::{Metric, MetricKind};
    ///
    /// const M: Metric = Metric::new("ratelimit_x_total", MetricKind::Counter, &["rule"], "my-crate", "Xs.");
    /// assert_eq!(M.labels, ["rule"]);
    /// ```
    pub const fn new(
        name: &'static str,
        kind: MetricKind,
        labels: &'static [&'static str],
        source: &'static str,
        help: &'static str,
    ) -> Self {
        Self {
            name,
            kind,
            labels,
            source,
            help,
        }
    }
}

/// Registers the help text (and a histogram's unit) of each of `catalogue`
/// on the installed `metrics` recorder, and registers the counters without
/// labels at 0, so that they are scraped (and `rate()` and alerts work)
/// before their first event. Each crate's `describe_metrics` calls it with
/// its own catalogue.
///
/// # Examples
///
/// ```
/// ratelimit_core::describe_catalogue(ratelimit_core::METRICS);
/// ```
pub fn describe_catalogue(catalogue: &[Metric]) {
    for m in catalogue {
        match m.kind {
            MetricKind::Counter => {
                metrics::describe_counter!(m.name, m.help);
                if m.labels.is_empty() {
                    metrics::counter!(m.name).increment(0);
                }
            }
            MetricKind::Gauge => metrics::describe_gauge!(m.name, m.help),
            MetricKind::Histogram => {
                metrics::describe_histogram!(m.name, metrics::Unit::Seconds, m.help)
            }
        }
    }
}

use MetricKind::{Counter as C, Gauge as G};

const fn m(
    name: &'static str,
    kind: MetricKind,
    labels: &'static [&'static str],
    help: &'static str,
) -> Metric {
    Metric::new(name, kind, labels, "ratelimit-core", help)
}

const RULE: &[&str] = &["rule"];
const NONE: &[&str] = &[];

/// Every metric `ratelimit-core` emits, the state gauges of
/// [`set_state_gauges`](crate::set_state_gauges) included.
pub const METRICS: &[Metric] = &[
    m("ratelimit_allowed_total", C, RULE, "Requests the rule admitted."),
    m("ratelimit_limited_total", C, RULE, "Requests the rule refused (429)."),
    m("ratelimit_would_limit_total", C, RULE, "Requests over the limit of a rule that only logs (action log, a canary's logging share, or a switch), let through."),
    m("ratelimit_fail_open_total", C, RULE, "Checks the backend could not answer, let through by the rule's fail_mode."),
    m("ratelimit_fail_closed_total", C, RULE, "Checks the backend could not answer, refused with 503 by fail_mode closed."),
    m("ratelimit_expired_total", C, RULE, "Requests the rule matched after its expires_at (not applied)."),
    m("ratelimit_allowlisted_total", C, RULE, "Requests that bypassed the rule through its allow list."),
    m("ratelimit_rule_capped_total", C, RULE, "Requests the rule matched but the cap of rules per request left out."),
    m("ratelimit_rules_capped_total", C, NONE, "Requests that matched more rules than the cap."),
    m("ratelimit_backstop_limited_total", C, NONE, "Requests refused by the per-IP backstop."),
    m("ratelimit_backstop_untracked_total", C, NONE, "Requests the backstop let through untracked because its table was full."),
    m("ratelimit_local_untracked_total", C, RULE, "Subjects a local store (fail_mode local, count rules) could not track because it was full."),
    m("ratelimit_charge_errors_total", C, RULE, "Charges after the response (charge response) lost: the backend did not answer and the rule's fail_mode is not local."),
    m("ratelimit_memory_evicted_live_total", C, NONE, "Live subjects the in-memory backend evicted to make room."),
    m("ratelimit_penalty_cache_dropped_total", C, NONE, "Penalties the local penalty cache could not hold (full): fails open."),
    m("ratelimit_overlimit_cache_dropped_total", C, NONE, "Refusals the over-limit cache could not hold (full): those subjects ask the backend again."),
    m("ratelimit_switch_on", G, &["switch"], "1 while the emergency switch is on: disable_rate_limiting, disable_config_blocking, disable_jwt (set_state_gauges)."),
    m("ratelimit_penalty_cache_blocks", G, NONE, "Blocks the local penalty cache holds (set_state_gauges)."),
    m("ratelimit_local_untracked", G, NONE, "Subjects the local stores could not track, so far (set_state_gauges)."),
];

/// Registers the help text (and a histogram's unit) of each of [`METRICS`]
/// on the installed `metrics` recorder, and registers the counters without
/// labels at 0, so that they are scraped (and `rate()` and alerts work)
/// before their first event: call it once, after installing the recorder.
///
/// # Examples
///
/// ```
/// // With a recorder installed (metrics-exporter-prometheus, for one):
/// ratelimit_core::describe_metrics();
/// assert!(ratelimit_core::METRICS.iter().all(|m| m.source == "ratelimit-core"));
/// ```
pub fn describe_metrics() {
    describe_catalogue(METRICS);
}
