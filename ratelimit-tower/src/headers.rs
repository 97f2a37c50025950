//! Rate-limit response headers, on every answer: the limiter's own and the
//! inner service's.
//!
//! - `Retry-After` on every 429 and 503, in whole seconds rounded up (added
//!   when the response has none).
//! - `RateLimit-Policy` and `RateLimit` (IETF draft structured fields), one
//!   item per blocking rule with `ratelimit_headers: true`, named by its id:
//!   `RateLimit-Policy: "login";q=5;w=60` and `RateLimit: "login";r=2;t=41`.
//!   Log rules and count rules send none.
//! - Optionally ([`RateLimitLayer::legacy_headers`](crate::RateLimitLayer::legacy_headers)),
//!   `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
//!   from the most restrictive item (fewest requests left, then the longest
//!   reset); the reset is in Unix epoch seconds, as GitHub's.

use http::header::{HeaderName, RETRY_AFTER};
use http::{HeaderMap, HeaderValue};
use ratelimit_core::verdict::HeaderItem;
use ratelimit_core::Verdict;

/// `RateLimit-Policy`.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// `X-RateLimit-Limit`.
pub const X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
/// `X-RateLimit-Remaining`.
pub const X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
/// `X-RateLimit-Reset`.
pub const X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// Adds the rate-limit headers of `verdict` to `headers`. `now_ms` (the
/// limiter's clock) dates the legacy reset, sent only with `legacy`.
pub fn apply(verdict: &Verdict, headers: &mut HeaderMap, legacy: bool, now_ms: u64) {
    if let Some(secs) = verdict.retry_after_secs() {
        if !headers.contains_key(RETRY_AFTER) {
            headers.insert(RETRY_AFTER, HeaderValue::from(secs));
        }
    }
    let policy = verdict.ratelimit_policy().and_then(value);
    let current = verdict.ratelimit().and_then(value);
    if let (Some(policy), Some(current)) = (policy, current) {
        headers.insert(RATELIMIT_POLICY, policy);
        headers.insert(RATELIMIT, current);
    }
    if legacy {
        if let Some(item) = most_restrictive(&verdict.headers) {
            let reset = (now_ms / 1000).saturating_add(item.reset_s);
            headers.insert(X_RATELIMIT_LIMIT, HeaderValue::from(item.quota));
            headers.insert(X_RATELIMIT_REMAINING, HeaderValue::from(item.remaining));
            headers.insert(X_RATELIMIT_RESET, HeaderValue::from(reset));
        }
    }
}

fn value(s: String) -> Option<HeaderValue> {
    HeaderValue::try_from(s).ok()
}

/// The item with the fewest requests left; on a tie the longest reset.
pub(crate) fn most_restrictive(items: &[HeaderItem]) -> Option<&HeaderItem> {
    items.iter().min_by(|a, b| {
        a.remaining
            .cmp(&b.remaining)
            .then(b.reset_s.cmp(&a.reset_s))
    })
}
