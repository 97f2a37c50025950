//! The metrics this crate emits ([`Metric::CORE`]), with their labels and
//! meaning, and the catalogue's types, which the other crates of the
//! workspace use for theirs (`ratelimit_valkey::METRICS`,
//! `ratelimit_tower::METRICS`, `ratelimit_nginx::METRICS`;
//! `ratelimit_admin::METRICS` lists them all).
//!
//! [`Metric::describe`] gives each metric of a catalogue its help text on the
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

    /// Registers the help text (and a histogram's unit) of each of `catalogue`
    /// on the installed `metrics` recorder, and registers the counters without
    /// labels at 0, so that they are scraped (and `rate()` and alerts work)
    /// before their first event: call it once, after installing the recorder,
    /// with [`Metric::CORE`] and the catalogue of each other crate the service
    /// uses (each crate's `describe_metrics` calls it with its own).
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::Metric;
    ///
    /// // With a recorder installed (metrics-exporter-prometheus, for one):
    /// Metric::describe(Metric::CORE);
    /// assert!(Metric::CORE.iter().all(|m| m.source == "ratelimit-core"));
    /// ```
    pub fn describe(catalogue: &[Metric]) {
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
}

/// The crate that emits a catalogue's metrics, which makes its entries:
/// each crate's catalogue is a list of `SOURCE.metric(...)`.
///
/// # Examples
///
/// ```
/// use ratelimit_core::{Metric, MetricKind, MetricSource};
///
/// const MINE: MetricSource = MetricSource::new("my-crate");
/// const METRICS: &[Metric] = &[MINE.metric("ratelimit_x_total", MetricKind::Counter, &["rule"], "Xs.")];
/// assert_eq!((METRICS[0].source, METRICS[0].labels), ("my-crate", &["rule"][..]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricSource(&'static str);

impl MetricSource {
    /// The catalogue of the crate named `source`.
    pub const fn new(source: &'static str) -> Self {
        Self(source)
    }

    /// An entry of this catalogue ([`Metric::new`] with this source).
    pub const fn metric(
        self,
        name: &'static str,
        kind: MetricKind,
        labels: &'static [&'static str],
        help: &'static str,
    ) -> Metric {
        Metric::new(name, kind, labels, self.0, help)
    }
}

use MetricKind::{Counter as C, Gauge as G};

/// This crate's entries.
const M: MetricSource = MetricSource::new("ratelimit-core");

const RULE: &[&str] = &["rule"];
const NONE: &[&str] = &[];

impl Metric {
    /// Every metric `ratelimit-core` emits, the state gauges of
    /// [`Limiter::set_state_gauges`](crate::Limiter::set_state_gauges)
    /// included.
    #[rustfmt::skip]
    pub const CORE: &'static [Metric] = &[
        M.metric("ratelimit_allowed_total", C, RULE, "Requests the rule admitted."),
        M.metric("ratelimit_limited_total", C, RULE, "Requests the rule refused (429)."),
        M.metric("ratelimit_would_limit_total", C, RULE, "Requests over the limit of a rule that only logs (action log, a canary's logging share, or a switch), let through."),
        M.metric("ratelimit_fail_open_total", C, RULE, "Checks the backend could not answer, let through by the rule's fail_mode."),
        M.metric("ratelimit_fail_closed_total", C, RULE, "Checks the backend could not answer, refused with 503 by fail_mode closed."),
        M.metric("ratelimit_expired_total", C, RULE, "Requests the rule matched after its expires_at (not applied)."),
        M.metric("ratelimit_allowlisted_total", C, RULE, "Requests that bypassed the rule through its allow list."),
        M.metric("ratelimit_rule_capped_total", C, RULE, "Requests the rule matched but the cap of rules per request left out."),
        M.metric("ratelimit_rules_capped_total", C, NONE, "Requests that matched more rules than the cap."),
        M.metric("ratelimit_backstop_limited_total", C, NONE, "Requests refused by the per-IP backstop."),
        M.metric("ratelimit_backstop_untracked_total", C, NONE, "Requests the backstop let through untracked because its table was full."),
        M.metric("ratelimit_local_untracked_total", C, RULE, "Subjects a local store (fail_mode local, count rules) could not track because it was full."),
        M.metric("ratelimit_charge_errors_total", C, RULE, "Charges after the response (charge response) lost: the backend did not answer and the rule's fail_mode is not local."),
        M.metric("ratelimit_memory_evicted_live_total", C, NONE, "Live subjects the in-memory backend evicted to make room."),
        M.metric("ratelimit_penalty_cache_dropped_total", C, NONE, "Penalties the local penalty cache could not hold (full): fails open."),
        M.metric("ratelimit_overlimit_cache_dropped_total", C, NONE, "Refusals the over-limit cache could not hold (full): those subjects ask the backend again."),
        M.metric("ratelimit_switch_on", G, &["switch"], "1 while the emergency switch is on: disable_rate_limiting, disable_config_blocking, disable_jwt (set_state_gauges)."),
        M.metric("ratelimit_penalty_cache_blocks", G, NONE, "Blocks the local penalty cache holds (set_state_gauges)."),
        M.metric("ratelimit_local_untracked", G, NONE, "Subjects the local stores could not track, so far (set_state_gauges)."),
    ];
}
