//! [`Limiter::explain`](super::Limiter::explain): what the limiter would
//! do with a request, rule by rule, without a backend call: which rules
//! match and in what order, which take a slot of the cap of 5 and which
//! the cap pushes out, each rule's key parts and subject digest, or why it
//! is skipped, falls back to the client IP or rejects; allow lists,
//! canaries and expiry. It is the operator's side ([`Operator`]).
//!
//! It runs the limiter's own selection (the same code as
//! [`Limiter::check`](super::Limiter::check)) over a copy of the published
//! rules with counters of its own, so explaining records nothing in the
//! rules' stats, and reads the same hash key, switches and clock.

use std::sync::Arc;

use super::operator::Operator;
use super::published::{Entry, Published};
use super::select::{Selection, Selector};
use crate::rules::in_canary;
use crate::rules::OnMissingKey;
use crate::subject::{distinct_value, part_text, subject_after, KeyOutcome};
use crate::{KeyDigest, RequestView};

/// Where a rule stands in selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleGroup {
    /// A site-wide rule (expression `true`): always runs, no slot taken.
    SiteWide,
    /// Any other rule: at most 5 run, blocking rules first.
    Other,
    /// A count rule (`count_statuses`), in a cap of 5 of its own.
    Count,
}

/// What selection made of one rule for the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleStatus {
    /// Checked: counted against its limit (a count rule: counts the
    /// response).
    Runs,
    /// The expression does not match.
    NoMatch,
    /// `expires_at` has passed: skipped.
    Expired,
    /// The request is on the rule's allow list: skipped.
    AllowListed,
    /// A key part is missing and `on_missing_key` is `skip`.
    KeyMissing,
    /// A `distinct` rule and the request lacks the value it counts.
    NoDistinctValue,
    /// A key part is missing and `on_missing_key` is `reject`: 400.
    Rejects,
    /// As [`RuleStatus::Rejects`], under a rule that only logs: passes.
    WouldReject,
    /// Matched, but the cap had no slot left: not checked.
    PushedOut,
    /// Pushed out by the cap, but it has a penalty: only the penalty
    /// cache is consulted.
    PenaltyOnly,
}

/// One rule's part of an [`Explanation`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleExplanation {
    /// The rule's id.
    pub rule: Arc<str>,
    /// Site-wide, other or count rule.
    pub group: RuleGroup,
    /// What selection made of it.
    pub status: RuleStatus,
    /// Its slot of the cap (1 to 5), for other rules that took one.
    pub slot: Option<usize>,
    /// Whether it blocks (action, switches and canary), rather than logs.
    pub blocks: bool,
    /// Each key part and the value the request gives it (`None`: missing).
    pub key: Vec<(String, Option<String>)>,
    /// The subject digest, when the rule keys the request.
    pub subject: Option<KeyDigest>,
    /// A part was missing and the subject is the client IP's fallback key.
    pub fallback_ip: bool,
    /// For a canary rule: whether this subject is among those it blocks.
    pub canary_in: Option<bool>,
}

/// What [`Limiter::explain`](super::Limiter::explain) found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explanation {
    /// The time selection was judged at (expiry).
    pub now_ms: u64,
    /// Every rule, in the order selection considers them: site-wide rules,
    /// other rules (blocking ones first), count rules.
    pub rules: Vec<RuleExplanation>,
    /// More rules matched than the cap lets run.
    pub capped: bool,
    /// A blocking rule rejects the request (400) for a missing key.
    pub rejected: bool,
}

impl Operator<'_> {
    /// See [`Limiter::explain`](super::Limiter::explain).
    pub(crate) fn explain(&self, req: &dyn RequestView) -> Explanation {
        let live = self.published();
        // Counters of its own: selection records expiries and caps.
        let p = Published::new(live.set.clone(), live.temporary.clone(), None);
        let hash_key = self.hash_key();
        let now = self.now_ms();
        let selector = Selector {
            req,
            hash_key: &hash_key,
            switches: &self.inner.switches,
            now,
            prefix: Default::default(),
        };
        let mut sel = Selection::default();
        selector.select(&p, p.compiled.as_ref(), &mut sel);
        let mut rules = Vec::new();
        for e in &p.site_wide {
            rules.push(self.explain_rule(e, RuleGroup::SiteWide, &sel, req, now));
        }
        let mut slot = 0;
        for pass in [true, false] {
            for e in p.others.iter().filter(|e| self.entry_blocks(e) == pass) {
                let mut x = self.explain_rule(e, RuleGroup::Other, &sel, req, now);
                if matches!(
                    x.status,
                    RuleStatus::Runs | RuleStatus::Rejects | RuleStatus::WouldReject
                ) {
                    slot += 1;
                    x.slot = Some(slot);
                }
                rules.push(x);
            }
        }
        for e in &p.counts {
            rules.push(self.explain_rule(e, RuleGroup::Count, &sel, req, now));
        }
        Explanation {
            now_ms: now,
            rules,
            capped: sel.capped,
            rejected: sel.reject,
        }
    }

    fn entry_blocks(&self, e: &Entry) -> bool {
        (self.inner.switches).blocks(e.rule.is_blocking(), e.added_at_run_time)
    }

    /// One rule: its key as the request gives it, and its status, from the
    /// selection where it was selected, else the reason it was not.
    fn explain_rule(
        &self,
        e: &Arc<Entry>,
        group: RuleGroup,
        sel: &Selection<'_>,
        req: &dyn RequestView,
        now: u64,
    ) -> RuleExplanation {
        let jwt_off = self.inner.switches.jwt_disabled();
        let key: Vec<(String, Option<String>)> = (e.rule.key.iter())
            .map(|p| (p.to_string(), part_text(p, req, jwt_off)))
            .collect();
        let missing = key.iter().any(|(_, v)| v.is_none());
        let outcome = subject_after(&e.rule, req, &self.hash_key(), jwt_off, &mut None, false);
        let subject = match outcome {
            KeyOutcome::Subject(s) => Some(s),
            _ => None,
        };
        let canary_in = e
            .rule
            .canary_bp
            .zip(subject)
            .map(|(bp, s)| in_canary(&s, bp));
        let is = |x: &Arc<Entry>| Arc::ptr_eq(x, e);
        let status =
            if sel.rules.iter().any(|p| is(p.entry)) || sel.counts.iter().any(|p| is(p.entry)) {
                RuleStatus::Runs
            } else if sel.penalty_only.iter().any(|p| is(p.entry)) {
                RuleStatus::PenaltyOnly
            } else if sel.would_reject.iter().any(|x| is(x)) {
                RuleStatus::WouldReject
            } else {
                why_not(e, req, jwt_off, now, outcome, self.entry_blocks(e))
            };
        let blocks = self.entry_blocks(e) && canary_in != Some(false);
        RuleExplanation {
            rule: e.id.clone(),
            group,
            status,
            slot: None,
            blocks,
            key,
            subject,
            fallback_ip: missing
                && e.rule.on_missing_key == OnMissingKey::FallbackIp
                && subject.is_some(),
            canary_in,
        }
    }
}

/// Why selection left rule `e` out, tested in selection's order.
fn why_not(
    e: &Entry,
    req: &dyn RequestView,
    jwt_off: bool,
    now: u64,
    outcome: KeyOutcome,
    blocks: bool,
) -> RuleStatus {
    let rule = &e.rule;
    if !rule.is_site_wide() && !rule.expression.matches_with(req, jwt_off) {
        return RuleStatus::NoMatch;
    }
    if rule.expired_at(now) {
        return RuleStatus::Expired;
    }
    if rule.allow.as_ref().is_some_and(|a| a.matches(req, jwt_off)) {
        return RuleStatus::AllowListed;
    }
    match outcome {
        KeyOutcome::Skip => return RuleStatus::KeyMissing,
        KeyOutcome::Reject if blocks => return RuleStatus::Rejects,
        KeyOutcome::Reject => return RuleStatus::WouldReject,
        KeyOutcome::Subject(_) => {}
    }
    if let Some(of) = &rule.distinct_of {
        if distinct_value(of, req).is_none() {
            return RuleStatus::NoDistinctValue;
        }
    }
    RuleStatus::PushedOut
}

#[cfg(test)]
mod tests;
