//! Every metric the workspace's crates emit, with its labels and meaning.
//!
//! [`METRICS`] is the list `docs/operators.md` documents (a test checks the
//! crates' sources, this list and that page agree); [`describe_metrics`]
//! gives each its help text on the installed `metrics` recorder, so a
//! Prometheus scrape carries `# HELP` lines.
//!
//! Every label has a bounded set of values: rule ids (from the rule set),
//! fixed outcome names, and Valkey node addresses (the deployment's). No
//! metric carries a client's key, IP or any request value.

/// What kind of metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// A distribution (seconds).
    Histogram,
}

/// One metric.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Metric {
    /// The name, as the crate registers it (`ratelimit_*`).
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: Kind,
    /// Its labels.
    pub labels: &'static [&'static str],
    /// The crate that emits it.
    pub source: &'static str,
    /// What it counts.
    pub help: &'static str,
}

const fn m(
    name: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    source: &'static str,
    help: &'static str,
) -> Metric {
    Metric {
        name,
        kind,
        labels,
        source,
        help,
    }
}

use Kind::{Counter as C, Gauge as G, Histogram as H};

const RULE: &[&str] = &["rule"];
const NONE: &[&str] = &[];
const NODE: &[&str] = &["node"];

/// Every metric, grouped by crate.
pub const METRICS: &[Metric] = &[
    m("ratelimit_allowed_total", C, RULE, "ratelimit-core", "Requests the rule admitted."),
    m("ratelimit_limited_total", C, RULE, "ratelimit-core", "Requests the rule refused (429)."),
    m("ratelimit_would_limit_total", C, RULE, "ratelimit-core", "Requests over the limit of a rule that only logs (action log, a canary's logging share, or a switch), let through."),
    m("ratelimit_fail_open_total", C, RULE, "ratelimit-core", "Checks the backend could not answer, let through by the rule's fail_mode."),
    m("ratelimit_fail_closed_total", C, RULE, "ratelimit-core", "Checks the backend could not answer, refused with 503 by fail_mode closed."),
    m("ratelimit_expired_total", C, RULE, "ratelimit-core", "Requests the rule matched after its expires_at (not applied)."),
    m("ratelimit_allowlisted_total", C, RULE, "ratelimit-core", "Requests that bypassed the rule through its allow list."),
    m("ratelimit_rule_capped_total", C, RULE, "ratelimit-core", "Requests the rule matched but the cap of rules per request left out."),
    m("ratelimit_rules_capped_total", C, NONE, "ratelimit-core", "Requests that matched more rules than the cap."),
    m("ratelimit_backstop_limited_total", C, NONE, "ratelimit-core", "Requests refused by the per-IP backstop."),
    m("ratelimit_backstop_untracked_total", C, NONE, "ratelimit-core", "Requests the backstop let through untracked because its table was full."),
    m("ratelimit_local_untracked_total", C, RULE, "ratelimit-core", "Subjects a local store (fail_mode local, count rules) could not track because it was full."),
    m("ratelimit_charge_errors_total", C, RULE, "ratelimit-core", "Charges after the response (charge response) lost: the backend did not answer and the rule's fail_mode is not local."),
    m("ratelimit_memory_evicted_live_total", C, NONE, "ratelimit-core", "Live subjects the in-memory backend evicted to make room."),
    m("ratelimit_penalty_cache_dropped_total", C, NONE, "ratelimit-core", "Penalties the local penalty cache could not hold (full): fails open."),
    m("ratelimit_overlimit_cache_dropped_total", C, NONE, "ratelimit-core", "Refusals the over-limit cache could not hold (full): those subjects ask the backend again."),
    m("ratelimit_switch_on", G, &["switch"], "ratelimit-admin", "1 while the emergency switch is on: disable_rate_limiting, disable_config_blocking, disable_jwt (set_state_gauges)."),
    m("ratelimit_penalty_cache_blocks", G, NONE, "ratelimit-admin", "Blocks the local penalty cache holds (set_state_gauges)."),
    m("ratelimit_local_untracked", G, NONE, "ratelimit-admin", "Subjects the local stores could not track, so far (set_state_gauges)."),
    m("ratelimit_decisions_total", C, &["outcome"], "ratelimit-tower", "Requests through the tower layer, by outcome: forward, limited, unavailable, bad_request, other."),
    m("ratelimit_responses_total", C, &["status_class"], "ratelimit-tower", "Responses through the tower layer, by status class: 1xx to 5xx."),
    m("ratelimit_nginx_limit_req_total", C, &["status"], "ratelimit-nginx", "limit_req outcomes, by $limit_req_status: PASSED, DELAYED, DELAYED_DRY_RUN, REJECTED, REJECTED_DRY_RUN."),
    m("ratelimit_nginx_limit_conn_total", C, &["status"], "ratelimit-nginx", "limit_conn outcomes, by $limit_conn_status: PASSED, REJECTED, REJECTED_DRY_RUN."),
    m("ratelimit_nginx_zone_exhausted_total", C, &["module"], "ratelimit-nginx", "Requests that found no free state in a zone, by module: limit_req, limit_conn."),
    m("ratelimit_valkey_errors_total", C, &["kind"], "ratelimit-valkey", "Checks that got no answer from Valkey, by kind: timeout, connection, breaker_open, protocol."),
    m("ratelimit_valkey_noscript_total", C, NONE, "ratelimit-valkey", "Round trips that had to load the scripts (NOSCRIPT)."),
    m("ratelimit_valkey_redirects_total", C, &["kind"], "ratelimit-valkey", "Checks a cluster node redirected (moved, ask), each followed once."),
    m("ratelimit_valkey_calls_total", C, &["node", "result"], "ratelimit-valkey", "Pipelined round trips to a node, by result: ok, error, breaker_open."),
    m("ratelimit_valkey_call_duration_seconds", H, NODE, "ratelimit-valkey", "How long each round trip to a node took, answered or not."),
    m("ratelimit_valkey_breaker_open_total", C, NODE, "ratelimit-valkey", "Times the node's circuit breaker opened."),
    m("ratelimit_valkey_breaker_open", G, NODE, "ratelimit-valkey", "1 while the node's circuit breaker refuses calls, else 0."),
    m("ratelimit_valkey_hash_key_total", C, &["event"], "ratelimit-valkey", "The fleet's hash key in Valkey, by event: written_back (missing, this instance's written with SET NX), adopted (another key stored: this instance took it), conflict (the configured hash_key differs from the stored one)."),
    m("ratelimit_control_version", G, NONE, "ratelimit-valkey", "The published rule-set version this instance runs (the control channel's follower)."),
    m("ratelimit_control_refused_total", C, NONE, "ratelimit-valkey", "Published rule sets this instance refused to load (size, schema, validation); it kept its running set."),
    m("ratelimit_control_lost", G, NONE, "ratelimit-valkey", "1 while the control keys are gone from Valkey (restart without persistence) and the instance keeps its set, else 0."),
];

/// Registers every metric's help text (and the histogram's unit) on the
/// installed `metrics` recorder, and registers the counters without labels
/// at 0, so that they are scraped (and `rate()` and alerts work) before
/// their first event: call it once, after installing the recorder.
///
/// # Examples
///
/// ```
/// // With a recorder installed (metrics-exporter-prometheus, for one):
/// ratelimit_admin::describe_metrics();
/// assert!(ratelimit_admin::METRICS.iter().all(|m| m.name.starts_with("ratelimit_")));
/// ```
pub fn describe_metrics() {
    for m in METRICS {
        match m.kind {
            Kind::Counter => {
                metrics::describe_counter!(m.name, m.help);
                if m.labels.is_empty() {
                    metrics::counter!(m.name).increment(0);
                }
            }
            Kind::Gauge => metrics::describe_gauge!(m.name, m.help),
            Kind::Histogram => {
                metrics::describe_histogram!(m.name, metrics::Unit::Seconds, m.help)
            }
        }
    }
}
