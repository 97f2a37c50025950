//! Rules written in Rust, validated like JSON ones.

use std::time::Duration;

use super::error::RuleError;
use super::raw::RawRule;
use super::rule::{Action, Charge, FailMode, OnMissingKey, Rule};
use super::validate;
use crate::algorithm::Algorithm;

/// Builds a [`Rule`] in Rust.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleBuilder;
/// use std::time::Duration;
///
/// let rule = RuleBuilder::new("login")
///     .expression(r#"http.request.uri.path eq "/login""#)
///     .sliding_window(5, Duration::from_secs(60))
///     .key(["ip"])
///     .penalty(Duration::from_secs(300))
///     .build()
///     .unwrap();
/// assert_eq!(rule.penalty_ms, Some(300_000));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RuleBuilder {
    raw: RawRule,
    error: Option<RuleError>,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl RuleBuilder {
    /// A rule with this id (expression `true` until set).
    pub fn new(id: impl Into<String>) -> Self {
        let raw = RawRule {
            id: id.into(),
            expression: Some("true".into()),
            ..RawRule::default()
        };
        Self { raw, error: None }
    }

    /// The match expression.
    pub fn expression(mut self, e: impl Into<String>) -> Self {
        self.raw.expression = Some(e.into());
        self
    }

    fn algo(mut self, a: Algorithm, limit: u64, period: Duration) -> Self {
        self.raw.algorithm = Some(a);
        self.raw.limit = Some(limit);
        self.raw.period_ms = Some(ms(period));
        self
    }

    /// `limit` per calendar window of `period`.
    pub fn fixed_window(self, limit: u64, period: Duration) -> Self {
        self.algo(Algorithm::FixedWindow, limit, period)
    }

    /// `limit` per sliding `period`.
    pub fn sliding_window(self, limit: u64, period: Duration) -> Self {
        self.algo(Algorithm::SlidingWindow, limit, period)
    }

    /// Refills `limit` tokens per `period`, up to `burst`.
    pub fn token_bucket(mut self, limit: u64, period: Duration, burst: u64) -> Self {
        self.raw.burst = Some(burst);
        self.algo(Algorithm::TokenBucket, limit, period)
    }

    /// Drains `limit` per `period`, holding up to `burst`.
    pub fn leaky_bucket(mut self, limit: u64, period: Duration, burst: u64) -> Self {
        self.raw.burst = Some(burst);
        self.algo(Algorithm::LeakyBucket, limit, period)
    }

    /// At most `limit` different values of `distinct_of` per `period`.
    pub fn distinct(mut self, distinct_of: &str, limit: u64, period: Duration) -> Self {
        self.raw.distinct_of = Some(distinct_of.to_owned());
        self.algo(Algorithm::Distinct, limit, period)
    }

    /// The key parts, such as `["ip"]` or `["ip", "header:x-tenant"]`.
    pub fn key<I: IntoIterator<Item = S>, S: Into<String>>(mut self, parts: I) -> Self {
        self.raw.key = Some(parts.into_iter().map(Into::into).collect());
        self
    }

    /// Count upstream answers with these statuses (`"404"`, `"4xx"`).
    pub fn count_statuses<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.raw.count_statuses = Some(s.into_iter().map(Into::into).collect());
        self
    }

    /// What to do when a key part is missing.
    pub fn on_missing_key(mut self, m: OnMissingKey) -> Self {
        self.raw.on_missing_key = Some(m);
        self
    }

    /// Log instead of block (shadow mode).
    pub fn log_only(mut self) -> Self {
        self.raw.action = Some(Action::Log);
        self
    }

    /// Stay blocked this long once over the limit.
    pub fn penalty(mut self, p: Duration) -> Self {
        self.raw.penalty_ms = Some(ms(p));
        self
    }

    /// What to do when the backend cannot answer.
    pub fn fail_mode(mut self, f: FailMode) -> Self {
        self.raw.fail_mode = Some(f);
        self
    }

    /// When the rule stops running (Unix ms).
    pub fn expires_at_ms(mut self, t: u64) -> Self {
        self.raw.expires_at_ms = Some(t);
        self
    }

    /// Send `RateLimit-Policy` / `RateLimit` headers.
    pub fn ratelimit_headers(mut self, on: bool) -> Self {
        self.raw.ratelimit_headers = Some(on);
        self
    }

    /// What one request costs.
    pub fn cost(mut self, cost: u64) -> Self {
        self.raw.cost = Some(cost);
        self
    }

    /// When the cost is counted: at request time (the default) or charged
    /// after the response ([`Limiter::charge`](crate::Limiter::charge)).
    ///
    /// ```
    /// use ratelimit_core::rules::{Charge, RuleBuilder};
    /// use std::time::Duration;
    ///
    /// let tokens = RuleBuilder::new("llm-tokens")
    ///     .fixed_window(10_000, Duration::from_secs(60))
    ///     .key(["header:x-api-key", "ip"])
    ///     .charge(Charge::Response)
    ///     .build()
    ///     .unwrap();
    /// assert!(tokens.charges_response());
    /// ```
    pub fn charge(mut self, charge: Charge) -> Self {
        self.raw.charge = Some(charge);
        self
    }

    /// IPs and key values that bypass the rule.
    pub fn allow(mut self, list: super::AllowList) -> Self {
        self.raw.allow = Some(list);
        self
    }

    /// Blocks for `percent` of subjects (chosen by a stable hash of the
    /// subject) and only logs for the others.
    pub fn canary(mut self, percent: f64) -> Self {
        if !(0.0..=100.0).contains(&percent) {
            self.error = Some(RuleError::new(
                Some(&self.raw.id),
                Some("canary"),
                "must be a percentage from 0 to 100",
            ));
        }
        self.raw.canary_bp = Some((percent.clamp(0.0, 100.0) * 100.0).round() as u32);
        self
    }

    /// Validates and builds the rule.
    ///
    /// # Errors
    ///
    /// Whatever JSON loading would refuse for this rule alone.
    pub fn build(self) -> Result<Rule, RuleError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        validate::rule(self.raw)
    }
}
