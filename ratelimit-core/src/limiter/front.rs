//! The front: [`Limiter`]'s public methods of the operator's side and of
//! response accounting, each one line handing the call to the part that
//! owns it. The map of the limiter's parts:
//!
//! | part | what | files |
//! | --- | --- | --- |
//! | [`Limiter`] (the front) | the handle callers hold; the published set | `mod.rs`, `front.rs`, `builder.rs` |
//! | [`Pipeline`](super::pipeline::Pipeline) | the hash key (and its change), select, plan, one backend call, settle | `pipeline.rs`, `check.rs`, `decide.rs`, `select.rs`, `settle.rs`, `compiled.rs`, `snapshot.rs`, `caches.rs`, `inline.rs`, `future.rs`, `key_change.rs` |
//! | [`Operator`] | publish, rules added at run time, peek / reset / lift, explain, switches, counters, gauges | `operator.rs`, `publish.rs`, `admin.rs`, `explain.rs`, `state_gauges.rs` |
//! | [`Accounting`] | after the response: count rules, charges | `accounting.rs`, `respond.rs`, `charge.rs` |
//!
//! The pipeline's public entries ([`Limiter::check`], [`Limiter::snapshot`])
//! and the keyed API's (`keyed_hooks.rs`, `crate::keyed`) are in their own
//! files.

use std::sync::Arc;

use super::accounting::Accounting;
use super::operator::Operator;
use super::{
    AdminError, ChargeFuture, Explanation, Limiter, LimiterStats, PenaltyCache, RuleStats,
};
use crate::algorithm::Decision;
use crate::rules::{Rule, RuleError, RuleSet};
use crate::switches::Switches;
use crate::verdict::ResponseTicket;
use crate::{KeyDigest, RequestAttrs, RequestView};

impl Limiter {
    /// The operator's side: publish, admin, explain, switches, counters.
    #[inline]
    pub(crate) fn operator(&self) -> Operator<'_> {
        Operator::new(self)
    }

    /// Response accounting: count rules and charges.
    #[inline]
    pub(crate) fn accounting(&self) -> Accounting<'_> {
        Accounting::new(self)
    }

    // The operator's side: publishing (publish.rs).

    /// Swaps the rule set. Counts of rules whose id, algorithm, period and
    /// `distinct_of` are unchanged carry over; the others start fresh.
    /// Rules added at run time stay, unless one clashes with the new set
    /// (same id, or the combination is invalid): those are dropped, with a
    /// warning event.
    pub fn publish(&self, rules: RuleSet) {
        self.operator().publish(rules)
    }

    /// Adds a rule at run time, as an autopilot would: it must carry an
    /// `expires_at` at most 24 hours ahead, and it keeps blocking when the
    /// switch "disable blocking by config rules" is on.
    ///
    /// # Errors
    ///
    /// No `expires_at`, one in the past or more than 24 hours ahead, an id
    /// already in use, or a combination the rule set refuses.
    pub fn add_temporary(&self, rule: Rule) -> Result<(), RuleError> {
        self.operator().add_temporary(rule)
    }

    /// The rules added at run time that have not expired.
    pub fn temporary_rules(&self) -> Vec<Arc<Rule>> {
        self.operator().temporary_rules()
    }

    /// Removes a rule added at run time; false when there is none by `id`.
    pub fn remove_temporary(&self, id: &str) -> bool {
        self.operator().remove_temporary(id)
    }

    // The operator's side: one subject (admin.rs).

    /// The subject of rule `id` for `req`.
    ///
    /// # Errors
    ///
    /// Unknown rule, or no key in the request.
    pub fn subject_of(&self, id: &str, req: &dyn RequestView) -> Result<KeyDigest, AdminError> {
        self.operator().subject_of(id, req)
    }

    /// Reads the state of `subject` under rule `id` without counting.
    ///
    /// # Errors
    ///
    /// Unknown rule, or the backend failed.
    pub async fn peek_subject(&self, id: &str, subject: KeyDigest) -> Result<Decision, AdminError> {
        self.operator().peek_subject(id, subject).await
    }

    /// Reads the state of `req`'s subject under rule `id` without counting.
    ///
    /// # Errors
    ///
    /// Unknown rule, no key in the request, or the backend failed.
    pub async fn peek(&self, id: &str, req: &RequestAttrs) -> Result<Decision, AdminError> {
        self.operator().peek(id, req).await
    }

    /// Forgets `subject` under rule `id`: its count and its penalty, here
    /// and in the backend (other instances' penalty and over-limit caches
    /// keep a block or refusal they already hold until it ends).
    ///
    /// # Errors
    ///
    /// Unknown rule, or the backend failed.
    pub async fn reset_subject(&self, id: &str, subject: KeyDigest) -> Result<(), AdminError> {
        self.operator().reset_subject(id, subject).await
    }

    /// Drops this instance's penalty-cache and over-limit-cache entries of
    /// `subject` under rule `id`, and nothing else: how the other
    /// instances of a fleet apply a lift whose shared state the lifter
    /// already reset ([`crate::control::Control::lift`]).
    ///
    /// # Errors
    ///
    /// Unknown rule.
    pub fn lift_cached(&self, id: &str, subject: KeyDigest) -> Result<(), AdminError> {
        self.operator().lift_cached(id, subject)
    }

    /// Forgets `req`'s subject under rule `id`.
    ///
    /// # Errors
    ///
    /// Unknown rule, no key in the request, or the backend failed.
    pub async fn reset(&self, id: &str, req: &RequestAttrs) -> Result<(), AdminError> {
        self.operator().reset(id, req).await
    }

    // The operator's side: explaining (explain.rs).

    /// Explains what [`Limiter::check`] would select for `req`, without a
    /// backend call and without counting anything.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::limiter::{RuleStatus};
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::{Limiter, RequestAttrs};
    ///
    /// let rules = RuleSet::from_json(r#"[{"id": "login",
    ///     "expression": "http.request.uri.path eq \"/login\"",
    ///     "algorithm": "sliding_window", "limit": 5, "period": "1m",
    ///     "key": ["header:x-user", "ip"], "on_missing_key": "skip"}]"#)?;
    /// let limiter = Limiter::new(rules);
    /// let req = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/login");
    /// let why = limiter.explain(&req);
    /// assert_eq!(why.rules[0].status, RuleStatus::KeyMissing);
    /// assert_eq!(why.rules[0].key[0], ("header:x-user".to_owned(), None));
    /// let why = limiter.explain(&req.with_header("x-user", "ann"));
    /// assert_eq!((why.rules[0].status, why.rules[0].slot), (RuleStatus::Runs, Some(1)));
    /// assert!(why.rules[0].subject.is_some());
    /// # Ok::<(), ratelimit_core::rules::RuleError>(())
    /// ```
    pub fn explain(&self, req: &dyn RequestView) -> Explanation {
        self.operator().explain(req)
    }

    // The operator's side: switches and counters (operator.rs,
    // state_gauges.rs).

    /// The emergency switches.
    #[inline]
    pub fn switches(&self) -> &Switches {
        self.operator().switches()
    }

    /// The local penalty cache.
    #[inline]
    pub fn penalty_cache(&self) -> &PenaltyCache {
        self.operator().penalty_cache()
    }

    /// Counters of the whole limiter.
    #[inline]
    pub fn stats(&self) -> &LimiterStats {
        self.operator().stats()
    }

    /// Counters of rule `id` (kept across publishes).
    pub fn rule_stats(&self, id: &str) -> Option<Arc<RuleStats>> {
        self.operator().rule_stats(id)
    }

    /// Subjects that the local stores could not track (fail_mode local and
    /// count rules), because they were full.
    pub fn local_untracked(&self) -> u64 {
        self.operator().local_untracked()
    }

    /// Refusals the over-limit cache could not store because it was full of
    /// live ones (those subjects' next requests asked the backend).
    pub fn overlimit_cache_dropped(&self) -> u64 {
        self.operator().overlimit_cache_dropped()
    }

    /// Sets the state gauges from this limiter: call it just before
    /// rendering a scrape.
    ///
    /// - `ratelimit_switch_on{switch}`: 1 while the switch is on
    ///   (`disable_rate_limiting`, `disable_config_blocking`, `disable_jwt`).
    /// - `ratelimit_penalty_cache_blocks`: blocks the penalty cache holds.
    /// - `ratelimit_local_untracked`: subjects the local stores could not track.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::{rules::RuleSet, Limiter};
    ///
    /// let limiter = Limiter::new(RuleSet::from_json("[]").unwrap());
    /// limiter.set_state_gauges();
    /// ```
    pub fn set_state_gauges(&self) {
        self.operator().set_state_gauges()
    }

    // Response accounting (respond.rs, charge.rs).

    /// Counts the upstream's answer `status` against the count rules of
    /// `ticket` (from the request's [`Verdict`](crate::Verdict)).
    #[inline]
    pub fn record_response(&self, ticket: &ResponseTicket, status: u16) {
        self.accounting().record_response(ticket, status)
    }

    /// Charges `cost` (tokens, rows, bytes: what the response reports it
    /// cost) to the `charge: response` rules of `ticket`, from the
    /// request's [`Verdict`](crate::Verdict). Call it once the cost is
    /// known, only for a request that was forwarded; cost 0 does nothing.
    ///
    /// The charge is added whether or not it fits: the total may pass the
    /// limit, and the subject's next requests are refused until the
    /// algorithm frees room again (`Retry-After` the wait until a request
    /// of cost 1 fits, or the penalty). All rules are charged in one
    /// backend call; with a backend that answers without I/O (the
    /// in-memory store) it is done in this call and the returned future is
    /// [ready](ChargeFuture::is_ready). Errors are logged, never returned.
    /// A rule published away since the request is not charged.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};
    ///
    /// let rules = RuleSet::from_json(r#"[{"id": "tokens", "expression": "true",
    ///     "algorithm": "fixed_window", "limit": 1000, "period": "1m",
    ///     "key": ["ip"], "charge": "response"}]"#).unwrap();
    /// let clock = ManualClock::new(1_767_225_600_000);
    /// let limiter = Limiter::builder(rules).clock(clock.clone()).build();
    /// let req = RequestAttrs::new("203.0.113.7".parse().unwrap());
    ///
    /// let v = limiter.check(&req).into_ready().unwrap();
    /// assert!(v.is_forward() && v.ticket.charges());
    /// // ... the upstream answers, having used 1200 tokens:
    /// let charged = limiter.charge(&v.ticket, 1200);
    /// assert!(charged.is_ready()); // the in-memory store answered at once
    ///
    /// clock.set_ms(1_767_225_615_000);
    /// let next = limiter.check(&req).into_ready().unwrap();
    /// assert_eq!(next.outcome, Outcome::Limited);
    /// assert_eq!(next.retry_after_secs(), Some(45)); // the next minute
    /// ```
    pub fn charge(&self, ticket: &ResponseTicket, cost: u64) -> ChargeFuture {
        self.accounting().charge(ticket, cost)
    }
}
