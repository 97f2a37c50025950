//! The backend's metrics, through the `metrics` facade.
//!
//! - `ratelimit_valkey_errors_total{kind}`: checks that got no answer, by
//!   kind: `timeout`, `connection`, `breaker_open`, `protocol`.
//! - `ratelimit_valkey_breaker_open_total`: times a node's breaker opened.
//! - `ratelimit_valkey_noscript_total`: round trips that had to load scripts.
//! - `ratelimit_valkey_redirects_total{kind}`: checks a cluster node
//!   redirected (`moved`, `ask`), each followed once.

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

/// Counts one opening of a breaker.
pub(crate) fn breaker_opened() {
    metrics::counter!("ratelimit_valkey_breaker_open_total").increment(1);
}

/// Counts one check redirected by a cluster node.
pub(crate) fn redirected(ask: bool) {
    let kind = if ask { "ask" } else { "moved" };
    metrics::counter!("ratelimit_valkey_redirects_total", "kind" => kind).increment(1);
}
