//! One-line layers for the common case: a limit per client IP.

use std::time::Duration;

use ratelimit_core::algorithm::Algorithm;
use ratelimit_core::rules::{RuleBuilder, RuleSet};

use crate::RateLimitLayer;

/// The id of the rule the one-line constructors build.
const RULE_ID: &str = "per-ip";

/// One-line limits per client IP.
impl RateLimitLayer {
    /// `n` requests per second per client IP (burst `n`), like
    /// [`per_ip_per_minute`](Self::per_ip_per_minute).
    ///
    /// # Panics
    ///
    /// When `n` is 0, as [`per_ip_per_minute`](Self::per_ip_per_minute).
    #[track_caller]
    pub fn per_ip_per_second(n: u32) -> Self {
        Self::per_ip(n, 1, "per_ip_per_second")
    }

    /// `n` requests per minute per client IP: a layer in one line.
    ///
    /// `per_ip_per_second(n)`, `per_ip_per_minute(n)` and
    /// `per_ip_per_hour(n)` read like governor's quotas and behave like
    /// them: each client IP may send a burst of `n` requests, then one more
    /// every `1/n` of the period.
    ///
    /// The algorithm is the leaky bucket in its meter form (GCRA), the one
    /// governor and `tower_governor` use, so a governor user gets what they
    /// expect: no window edge where twice the limit gets through in a
    /// moment, an exact `Retry-After`, and constant memory per client. Over
    /// any span of one period a client gets at most `2n - 1` requests (a
    /// full burst, then the refill). No window algorithm does better: a
    /// `fixed_window` passes up to `2n` across its edge and a
    /// `sliding_window` up to `2n - 1` (it weighs the previous window as if
    /// its requests were spread evenly). For a hard "at most `n` in any
    /// period", write a `leaky_bucket` or `token_bucket` rule with `burst`
    /// 1: its admissions are at least `1/n` of the period apart (the
    /// guide's Rules chapter, "What a period holds").
    ///
    /// The layer has one rule, `"per-ip"`: keyed on the client IP (IPv6 per
    /// /64), on the in-memory backend and the system clock, sending the
    /// `RateLimit-Policy` / `RateLimit` headers. `n` above one billion is
    /// taken as one billion. Chain the usual options
    /// (`.trusted_proxies(...)` behind a proxy), or write rules for anything
    /// else.
    ///
    /// ```no_run
    /// use axum::{routing::get, Router};
    /// use ratelimit_tower::RateLimitLayer;
    ///
    /// let app: Router = Router::new()
    ///     .route("/", get(|| async { "hello" }))
    ///     .layer(RateLimitLayer::per_ip_per_minute(100).for_axum());
    /// ```
    ///
    /// Serve it with `into_make_service_with_connect_info::<SocketAddr>()`
    /// so the layer sees the client address.
    ///
    /// # Panics
    ///
    /// When `n` is 0: a limit of no request would refuse every client, which
    /// is never what a one-line limit means (as governor's quotas take a
    /// `NonZeroU32`). The panic names the call; it happens where the layer
    /// is built, at startup, never on a request.
    ///
    /// ```should_panic
    /// # use ratelimit_tower::RateLimitLayer;
    /// let _ = RateLimitLayer::per_ip_per_minute(0); // panics: "... give n of 1 or more"
    /// ```
    #[track_caller]
    pub fn per_ip_per_minute(n: u32) -> Self {
        Self::per_ip(n, 60, "per_ip_per_minute")
    }

    /// `n` requests per hour per client IP (burst `n`), like
    /// [`per_ip_per_minute`](Self::per_ip_per_minute).
    ///
    /// # Panics
    ///
    /// When `n` is 0, as [`per_ip_per_minute`](Self::per_ip_per_minute).
    #[track_caller]
    pub fn per_ip_per_hour(n: u32) -> Self {
        Self::per_ip(n, 3600, "per_ip_per_hour")
    }

    #[track_caller]
    fn per_ip(n: u32, period_secs: u64, name: &str) -> Self {
        assert!(
            n > 0,
            "RateLimitLayer::{name}(0): a limit of 0 would refuse every request; \
             give n of 1 or more (or leave the layer out)"
        );
        Self::from_rules(per_ip_rules(n, period_secs))
    }
}

/// The one rule of the per-IP layers. Every `n` from 1 and each period
/// above validate (a test checks the extremes); were one refused, the layer would
/// limit nothing and say so in the log rather than panic.
fn per_ip_rules(n: u32, period_secs: u64) -> RuleSet {
    let limit = u64::from(n).clamp(1, Algorithm::MAX_LIMIT); // 0 refused by the caller
    let rule = RuleBuilder::new(RULE_ID)
        .leaky_bucket(limit, Duration::from_secs(period_secs), limit)
        .key(["ip"])
        .ratelimit_headers(true)
        .build();
    match rule.and_then(|r| RuleSet::from_rules(vec![r])) {
        Ok(set) => set,
        Err(e) => {
            tracing::error!(error = %e, "ratelimit: the per-IP rule did not validate; no limit");
            RuleSet::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelimit_core::algorithm::Algorithm;

    #[test]
    fn every_count_and_period_builds_the_one_rule() {
        for n in [1, 100, 1_000_000_000, u32::MAX] {
            for secs in [1, 60, 3600] {
                let set = per_ip_rules(n, secs);
                let r = &set.rules()[0];
                assert_eq!(r.id, RULE_ID);
                assert_eq!(r.algorithm, Algorithm::LeakyBucket);
                assert_eq!(r.limit, u64::from(n).clamp(1, Algorithm::MAX_LIMIT), "{n}");
                assert_eq!(r.burst, Some(r.limit));
                assert_eq!(r.period_ms, secs * 1000);
                assert!(r.ratelimit_headers);
            }
        }
    }

    /// Issue 41: a limit of 0 is refused where the layer is built, naming
    /// the call, rather than taken as 1.
    #[test]
    fn a_limit_of_zero_is_refused_naming_the_call() {
        for (build, name) in [
            (
                RateLimitLayer::per_ip_per_second as fn(u32) -> RateLimitLayer,
                "per_ip_per_second",
            ),
            (RateLimitLayer::per_ip_per_minute, "per_ip_per_minute"),
            (RateLimitLayer::per_ip_per_hour, "per_ip_per_hour"),
        ] {
            let panic = std::panic::catch_unwind(|| build(0)).unwrap_err();
            let message = panic.downcast_ref::<String>().expect("a formatted message");
            assert!(
                message.starts_with(&format!("RateLimitLayer::{name}(0): a limit of 0")),
                "{message}"
            );
            assert!(message.ends_with("give n of 1 or more (or leave the layer out)"));
            let _ = build(1);
        }
    }
}
