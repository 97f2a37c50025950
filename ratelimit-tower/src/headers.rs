//! Rate-limit response headers, on every answer: the limiter's own and the
//! inner service's.
//!
//! - `Retry-After` on every 429 and 503, in whole seconds rounded up (added
//!   when the response has none).
//! - `RateLimit-Policy` and `RateLimit` (IETF draft structured fields), one
//!   item per blocking rule with `ratelimit_headers: true`, named by its id:
//!   `RateLimit-Policy: "login";q=5;w=60` and `RateLimit: "login";r=2;t=41`.
//!   `q` is the quota the rule allows in its window `w`: a window rule's
//!   `limit` per `period`, a bucket's `burst` per the seconds it takes to
//!   refill it, so that `r` never passes `q`. Log rules and count rules
//!   send none.
//! - Optionally ([`RateLimitLayer::legacy_headers`](crate::RateLimitLayer::legacy_headers)),
//!   `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
//!   from the most restrictive item (fewest requests left, then the longest
//!   reset); the reset is in Unix epoch seconds, as GitHub's.

use bytes::Bytes;
use http::header::{HeaderName, RETRY_AFTER};
use http::{HeaderMap, HeaderValue};
use ratelimit_core::limiter::HeaderItem;
use ratelimit_core::{Outcome, Verdict};

mod kept;

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
            headers.insert(RETRY_AFTER, number(secs));
        }
    }
    apply_items(&verdict.headers, verdict.outcome, headers, legacy, now_ms);
}

/// The `RateLimit-Policy` / `RateLimit` (and with `legacy` the
/// `X-RateLimit-*`) headers of a verdict's header `items`: what [`apply`]
/// adds besides `Retry-After`, for an answer with this `outcome`.
pub(crate) fn apply_items(
    items: &[HeaderItem],
    outcome: Outcome,
    headers: &mut HeaderMap,
    legacy: bool,
    now_ms: u64,
) {
    if items.is_empty() {
        return;
    }
    // The same text as `Verdict::ratelimit_policy` / `Verdict::ratelimit`,
    // written straight into one buffer of the exact size each; the policy,
    // which only changes with the matched rules, and the current value of a
    // refusal are reused (`kept`).
    let policy = kept::policy(items, policy_params, || {
        structured(items, *b"qw", policy_params)
    });
    let current = || structured(items, *b"rt", current_params);
    let current = match outcome {
        Outcome::Forward => current(),
        _ => kept::refused(items, current_params, current),
    };
    if let (Some(policy), Some(current)) = (policy, current) {
        headers.insert(RATELIMIT_POLICY, policy);
        headers.insert(RATELIMIT, current);
    }
    if legacy {
        if let Some(item) = most_restrictive(items) {
            let reset = (now_ms / 1000).saturating_add(item.reset_s);
            headers.insert(X_RATELIMIT_LIMIT, number(item.quota));
            headers.insert(X_RATELIMIT_REMAINING, number(item.remaining));
            headers.insert(X_RATELIMIT_RESET, HeaderValue::from(reset));
        }
    }
}

/// The parameters of a `RateLimit-Policy` item: `q` and `w`.
fn policy_params(h: &HeaderItem) -> (u64, u64) {
    (h.quota, h.window_s)
}

/// The parameters of a `RateLimit` item: `r` and `t`.
fn current_params(h: &HeaderItem) -> (u64, u64) {
    (h.remaining, h.reset_s)
}

/// `"id";a=1;b=2, "id2";a=3;b=4`: one item per header item, the values of
/// the parameters named `a` and `b` from `params`; `None` without items or
/// when a rule id is not a valid header value.
fn structured(
    items: &[HeaderItem],
    [a, b]: [u8; 2],
    params: impl Fn(&HeaderItem) -> (u64, u64),
) -> Option<HeaderValue> {
    if items.is_empty() {
        return None;
    }
    // `, ` between items; per item two quotes and `;a=`, `;b=`.
    let len = items.iter().fold(2 * (items.len() - 1), |len, h| {
        let (x, y) = params(h);
        len + h.id.len() + 8 + digits(x) + digits(y)
    });
    let mut buf = Vec::with_capacity(len);
    for (i, h) in items.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b", ");
        }
        let (x, y) = params(h);
        buf.push(b'"');
        buf.extend_from_slice(h.id.as_bytes());
        buf.extend_from_slice(&[b'"', b';', a, b'=']);
        push_u64(&mut buf, x);
        buf.extend_from_slice(&[b';', b, b'=']);
        push_u64(&mut buf, y);
    }
    debug_assert_eq!(buf.len(), len);
    // An exact fit: the `Bytes` takes the buffer over without copying.
    HeaderValue::from_maybe_shared(Bytes::from(buf)).ok()
}

/// "0" to "9", then "10" to "99": the text of every number below 100.
const SMALL: &str = "0123456789101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// `n` as a header value, as `HeaderValue::from(n)` writes it: a static
/// one below 100 (no allocation), otherwise one exact-size buffer
/// (`HeaderValue::from` allocates twice).
pub(crate) fn number(n: u64) -> HeaderValue {
    let text = match usize::try_from(n) {
        Ok(n @ 0..=9) => SMALL.get(n..=n),
        Ok(n @ 10..=99) => SMALL.get(2 * n - 10..2 * n - 8),
        _ => None,
    };
    if let Some(text) = text {
        return HeaderValue::from_static(text);
    }
    let mut buf = Vec::with_capacity(digits(n));
    push_u64(&mut buf, n);
    HeaderValue::from_maybe_shared(Bytes::from(buf)).unwrap_or_else(|_| HeaderValue::from(n))
}

/// The number of decimal digits of `n`.
pub(crate) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Appends `n` in decimal (`itoa`: two digits a step).
pub(crate) fn push_u64(buf: &mut Vec<u8>, n: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The item with the fewest requests left; on a tie the longest reset.
pub(crate) fn most_restrictive(items: &[HeaderItem]) -> Option<&HeaderItem> {
    items.iter().min_by(|a, b| {
        a.remaining
            .cmp(&b.remaining)
            .then(b.reset_s.cmp(&a.reset_s))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelimit_core::rules::RuleSet;
    use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

    /// Verdicts with no, one and three header items, some of them refusals.
    fn verdicts() -> Vec<Verdict> {
        let rules = RuleSet::from_json(
            r#"[{"id": "a", "expression": "true", "algorithm": "fixed_window",
                "limit": 3, "period": "1m", "key": ["ip"], "ratelimit_headers": true},
               {"id": "login-2", "expression": "http.request.uri.path eq \"/login\"",
                "algorithm": "sliding_window", "limit": 1000000000, "period": "1d",
                "key": ["ip"], "ratelimit_headers": true},
               {"id": "z", "expression": "http.request.uri.path eq \"/login\"",
                "algorithm": "leaky_bucket", "limit": 10, "burst": 12, "period": "10s",
                "key": ["ip"], "ratelimit_headers": true}]"#,
        )
        .unwrap();
        let clock = ManualClock::new(1_767_225_600_000);
        let limiter = Limiter::builder(rules).clock(clock.clone()).build();
        let ip = "192.0.2.1".parse().unwrap();
        let mut out = Vec::new();
        // Then refusals of the same rules, seconds apart: the same ids,
        // other seconds to wait.
        for path in ["/", "/login", "/login", "/", "/login", "/", "/", "/login"] {
            let req = RequestAttrs::new(ip).with_path(path);
            out.push(limiter.check(&req).into_ready().unwrap());
            clock.advance(std::time::Duration::from_millis(2500));
        }
        out
    }

    #[test]
    fn the_values_read_as_the_verdicts_own() {
        let verdicts = verdicts();
        assert!(verdicts.iter().any(|v| v.headers.len() == 3));
        assert!(verdicts.iter().any(|v| !v.is_forward()));
        // Twice over: the second time the kept values are read, and each
        // must still be the verdict's own.
        for v in verdicts.iter().chain(&verdicts) {
            let mut headers = HeaderMap::new();
            apply(v, &mut headers, false, 0);
            let text = |name| {
                headers
                    .get(name)
                    .map(|h: &HeaderValue| h.to_str().unwrap().to_owned())
            };
            assert_eq!(text(RATELIMIT_POLICY), v.ratelimit_policy());
            assert_eq!(text(RATELIMIT), v.ratelimit());
        }
    }

    #[test]
    fn header_numbers_read_as_http_writes_them() {
        for n in (0..=1000).chain([u64::MAX]) {
            assert_eq!(number(n), HeaderValue::from(n), "{n}");
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX] {
            let mut buf = Vec::new();
            push_u64(&mut buf, n);
            assert_eq!(buf, n.to_string().as_bytes());
            assert_eq!(digits(n), buf.len());
        }
    }
}
