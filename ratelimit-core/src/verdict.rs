//! The one answer a request gets, and what its response headers need.

use std::fmt::Write;
use std::sync::Arc;

use crate::algorithm::Algorithm;
use crate::rules::Rule;
use crate::KeyDigest;

/// What happens to the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Continue to the upstream.
    Forward,
    /// 429: a blocking rule is over its limit (or the backstop).
    Limited,
    /// 503: a `fail_mode: closed` rule could not be answered.
    Unavailable,
    /// 400: a rule with `on_missing_key: reject` found no key.
    BadRequest,
}

/// One item of the `RateLimit-Policy` / `RateLimit` headers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderItem {
    /// The rule's id.
    pub id: Arc<str>,
    /// The quota the rule allows in its window (`q`): the `limit` of a
    /// window rule, the `burst` of a bucket.
    pub quota: u64,
    /// The window in seconds (`w`): the `period` of a window rule, the
    /// time a bucket takes to refill its `burst` (rounded up).
    pub window_s: u64,
    /// Requests left (`r`).
    pub remaining: u64,
    /// Seconds until the quota is whole again (`t`).
    pub reset_s: u64,
}

impl HeaderItem {
    /// The item of `rule` (named `id`): its policy ([`HeaderItem::policy`])
    /// and the budget the request found, `remaining` requests left and
    /// `reset_ms` until whole again (in seconds, rounded up).
    pub(crate) fn of(id: Arc<str>, rule: &Rule, remaining: u64, reset_ms: u64) -> Self {
        let (quota, window_s) = Self::policy(rule);
        Self {
            id,
            quota,
            window_s,
            remaining,
            reset_s: reset_ms.div_ceil(1000),
        }
    }

    /// `q` and `w` of `rule`: the quota the rule allows in its window (the
    /// IETF draft's meaning). A window rule allows `limit` per `period`. A
    /// bucket allows `burst` at once and refills it in `burst × period /
    /// limit`: that is its window (whole seconds, rounded up, at least 1),
    /// so that `r` never passes `q` nor `t` passes `w`, as for a window
    /// rule, and `q / w` is the rule's rate (or less, when `w` is rounded).
    pub(crate) fn policy(rule: &Rule) -> (u64, u64) {
        match (rule.algorithm, rule.burst) {
            (Algorithm::TokenBucket | Algorithm::LeakyBucket, Some(burst)) => {
                let refill_ms =
                    u128::from(burst) * u128::from(rule.period_ms) / u128::from(rule.limit.max(1));
                let window_s = u64::try_from(refill_ms.div_ceil(1000)).unwrap_or(u64::MAX);
                (burst, window_s.max(1))
            }
            _ => (rule.limit, rule.period_ms / 1000),
        }
    }
}

/// What one rule said, for logs and traces.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleReport {
    /// The rule's id.
    pub rule: Arc<str>,
    /// The subject's digest (never the raw key).
    pub subject: KeyDigest,
    /// Whether the rule let the request through.
    pub allowed: bool,
    /// Requests left.
    pub remaining: u64,
    /// A log rule that would have limited the request.
    pub would_limit: bool,
    /// The backend could not answer; the rule followed its `fail_mode`.
    pub failed: bool,
    /// Answered from the penalty cache, without the backend.
    pub from_penalty_cache: bool,
}

/// A count rule that matched, to count the upstream's answer against.
#[derive(Debug, Clone)]
pub(crate) struct CountItem {
    pub(crate) rule: Arc<crate::rules::Rule>,
    pub(crate) namespace: Arc<str>,
    pub(crate) subject: KeyDigest,
    /// Where the subject's penalty is keyed (derived at request time).
    pub(crate) state_key: KeyDigest,
    pub(crate) blocks: bool,
}

/// A `charge: response` rule that matched, to charge the response's cost
/// to: everything its check needs, derived at request time.
#[derive(Debug, Clone)]
pub(crate) struct ChargeItem {
    pub(crate) rule: Arc<crate::rules::Rule>,
    pub(crate) namespace: Arc<str>,
    pub(crate) namespace_digest: KeyDigest,
    pub(crate) subject: KeyDigest,
    pub(crate) state_key: KeyDigest,
    pub(crate) blocks: bool,
    /// The penalty a charge over the limit starts (`None` unless blocking).
    pub(crate) penalty_ms: Option<u64>,
}

/// What is needed after the response: the count rules (`count_statuses`)
/// that count the upstream's status ([`Limiter::record_response`]), and
/// the rules charged by the response's cost (`charge: response`,
/// [`Limiter::charge`]).
///
/// [`Limiter::record_response`]: crate::Limiter::record_response
/// [`Limiter::charge`]: crate::Limiter::charge
#[derive(Debug, Clone, Default)]
pub struct ResponseTicket {
    /// Boxed, and absent until a rule needs it: most requests match no
    /// count or charge rule, and a ticket is moved with its verdict and
    /// the response future that holds it (one word rather than four).
    items: Option<Box<TicketItems>>,
}

/// The common ticket (no items) dropped in line: the drop glue of the
/// boxed items, out of line, was a call on every request.
impl Drop for ResponseTicket {
    #[inline]
    fn drop(&mut self) {
        if let Some(items) = self.items.take() {
            drop_items(items);
        }
    }
}

/// A ticket's items, dropped.
#[cold]
#[inline(never)]
fn drop_items(items: Box<TicketItems>) {
    drop(items);
}

/// The items of a ticket.
#[derive(Debug, Clone, Default)]
struct TicketItems {
    counts: Vec<CountItem>,
    charges: Vec<ChargeItem>,
}

impl ResponseTicket {
    /// Whether no count rule matched (rules charged after the response are
    /// told by [`ResponseTicket::charges`]).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count_items().is_empty()
    }

    /// How many count rules matched.
    pub fn len(&self) -> usize {
        self.count_items().len()
    }

    /// Whether a `charge: response` rule matched: the response's cost is
    /// expected, through [`Limiter::charge`](crate::Limiter::charge).
    #[inline]
    pub fn charges(&self) -> bool {
        !self.charge_items().is_empty()
    }

    /// The count rules that matched.
    #[inline]
    pub(crate) fn count_items(&self) -> &[CountItem] {
        self.items.as_ref().map_or(&[], |t| &t.counts)
    }

    /// The `charge: response` rules that matched.
    #[inline]
    pub(crate) fn charge_items(&self) -> &[ChargeItem] {
        self.items.as_ref().map_or(&[], |t| &t.charges)
    }

    pub(crate) fn push_count(&mut self, item: CountItem) {
        self.items
            .get_or_insert_with(Box::default)
            .counts
            .push(item);
    }

    pub(crate) fn push_charge(&mut self, item: ChargeItem) {
        self.items
            .get_or_insert_with(Box::default)
            .charges
            .push(item);
    }
}

/// The limiter's answer for one request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Verdict {
    /// Forward, 429, 503 or 400.
    pub outcome: Outcome,
    /// For 429: the longest wait among the blocking rules over their limit.
    pub retry_after_ms: u64,
    /// Header items, one per blocking rule with `ratelimit_headers`.
    pub headers: Vec<HeaderItem>,
    /// Ids of log rules that counted this request as over their limit.
    pub would_limit: Vec<String>,
    /// What each rule said: filled only when asked
    /// ([`LimiterBuilder::reports`](crate::LimiterBuilder::reports)) or
    /// while `tracing` is enabled at debug level for this crate, so that
    /// the allow path allocates nothing for it.
    pub reports: Vec<RuleReport>,
    /// Count rules to count the upstream's answer against, and rules to
    /// charge the response's cost to.
    pub ticket: ResponseTicket,
}

impl Verdict {
    #[inline]
    pub(crate) fn forward() -> Self {
        Self {
            outcome: Outcome::Forward,
            retry_after_ms: 0,
            headers: Vec::new(),
            would_limit: Vec::new(),
            reports: Vec::new(),
            ticket: ResponseTicket::default(),
        }
    }

    /// Whether the request goes on to the upstream.
    #[inline]
    pub fn is_forward(&self) -> bool {
        self.outcome == Outcome::Forward
    }

    /// `Retry-After` in whole seconds, rounded up, at least 1: on a 429, and
    /// 1 on a 503.
    #[inline]
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self.outcome {
            Outcome::Limited => Some(self.retry_after_ms.div_ceil(1000).max(1)),
            Outcome::Unavailable => Some(1),
            _ => None,
        }
    }

    /// The `RateLimit-Policy` header: `"login";q=5;w=60, ...`.
    pub fn ratelimit_policy(&self) -> Option<String> {
        join(&self.headers, |s, h| {
            let _ = write!(s, "\"{}\";q={};w={}", h.id, h.quota, h.window_s);
        })
    }

    /// The `RateLimit` header: `"login";r=2;t=41, ...`.
    pub fn ratelimit(&self) -> Option<String> {
        join(&self.headers, |s, h| {
            let _ = write!(s, "\"{}\";r={};t={}", h.id, h.remaining, h.reset_s);
        })
    }
}

fn join(items: &[HeaderItem], f: impl Fn(&mut String, &HeaderItem)) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let mut s = String::new();
    for (i, h) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        f(&mut s, h);
    }
    Some(s)
}

#[cfg(test)]
mod tests;
