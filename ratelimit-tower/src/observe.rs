//! What the layer reports of each request: the outcome and the
//! OpenTelemetry attributes on its `ratelimit` span, one debug event per
//! rule, and the `metrics` counters `ratelimit_decisions_total{outcome}` and
//! `ratelimit_responses_total{status_class}` (catalogued in
//! `metric_catalog.rs`).

use http::StatusCode;
use ratelimit_core::{Outcome, Verdict};
use tracing::Span;

/// Records the verdict on the span, the metrics and one event per rule
/// (the limiter fills the reports only while debug events are enabled).
#[inline]
pub(crate) fn observe(counters: &Counters, span: Option<&Span>, verdict: &Verdict) {
    if let Some(span) = span {
        span.record("outcome", outcome_label(verdict.outcome));
        if !span.is_disabled() {
            record_otel(span, verdict);
        }
    }
    counters.decision(verdict.outcome);
    if !verdict.reports.is_empty() {
        report(verdict);
    }
}

/// The OpenTelemetry attributes of the request's span: `ratelimit.allowed`,
/// and from the deciding rule's report (the first blocking rule that
/// refused, else the rule with the least left) `ratelimit.rule`,
/// `ratelimit.key` (its subject digest, never the raw key) and
/// `ratelimit.remaining`.
#[inline(never)]
fn record_otel(span: &Span, verdict: &Verdict) {
    span.record("ratelimit.allowed", verdict.outcome == Outcome::Forward);
    let refused = verdict
        .reports
        .iter()
        .find(|r| !r.allowed && !r.would_limit);
    let deciding = refused.or_else(|| verdict.reports.iter().min_by_key(|r| r.remaining));
    if let Some(r) = deciding {
        span.record("ratelimit.rule", &*r.rule);
        span.record("ratelimit.key", r.subject.to_hex());
        // An i64: tracing-opentelemetry writes a u64 as a string.
        let remaining = i64::try_from(r.remaining).unwrap_or(i64::MAX);
        span.record("ratelimit.remaining", remaining);
    }
}

/// One debug event per rule of `verdict`.
#[inline(never)]
fn report(verdict: &Verdict) {
    for r in &verdict.reports {
        let decision = match (r.allowed, r.would_limit) {
            (true, _) => "allowed",
            (false, true) => "would_limit",
            (false, false) => "limited",
        };
        tracing::debug!(
            rule = %r.rule,
            subject = %r.subject.to_hex(),
            decision,
            remaining = r.remaining,
            failed = r.failed,
            from_penalty_cache = r.from_penalty_cache,
            "rate limit rule",
        );
    }
}

/// The layer's `metrics` counters, registered once when the layer wraps a
/// service (install the application's recorder before that).
#[derive(Debug)]
pub(crate) struct Counters {
    /// `ratelimit_decisions_total{outcome}`: forward, limited, unavailable,
    /// bad_request, other.
    decisions: [metrics::Counter; 5],
    /// `ratelimit_responses_total{status_class}`: 1xx to 5xx.
    responses: [metrics::Counter; 5],
}

impl Counters {
    pub(crate) fn new() -> Self {
        let outcomes = ["forward", "limited", "unavailable", "bad_request", "other"];
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"];
        Self {
            decisions: outcomes
                .map(|o| metrics::counter!("ratelimit_decisions_total", "outcome" => o)),
            responses: classes
                .map(|c| metrics::counter!("ratelimit_responses_total", "status_class" => c)),
        }
    }

    #[inline]
    pub(crate) fn decision(&self, outcome: Outcome) {
        let i = match outcome {
            Outcome::Forward => 0,
            Outcome::Limited => 1,
            Outcome::Unavailable => 2,
            Outcome::BadRequest => 3,
            _ => 4,
        };
        self.decisions[i].increment(1);
    }

    pub(crate) fn response(&self, status: StatusCode) {
        self.responses[class_index(status)].increment(1);
    }
}

/// The status class of `status` as an index: 1xx is 0, ..., 5xx is 4.
pub(crate) fn class_index(status: StatusCode) -> usize {
    (status.as_u16() / 100).clamp(1, 5) as usize - 1
}

/// The label of an outcome.
pub(crate) fn outcome_label(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Forward => "forward",
        Outcome::Limited => "limited",
        Outcome::Unavailable => "unavailable",
        Outcome::BadRequest => "bad_request",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        assert_eq!(class_index(StatusCode::OK), 1);
        assert_eq!(class_index(StatusCode::TOO_MANY_REQUESTS), 3);
        assert_eq!(class_index(StatusCode::BAD_GATEWAY), 4);
        assert_eq!(class_index(StatusCode::CONTINUE), 0);
    }
}
