//! The second half of a decision: each selected rule's answer (from the
//! penalty or over-limit cache, or the backend) applied to the verdict in
//! rule order, with the fail modes (a failed check resolved by its rule's
//! `fail_mode`, `Caches::resolve`). It writes to the verdict, the rules'
//! stats and the `Caches` it is given, never to the limiter. [`Settle`] takes the rules one at a
//! time through one loop ([`Rules`]), so that the in-memory path can apply
//! each answer as the backend hands it over ([`Backend::check_now_each`])
//! without collecting them, and an awaited call its list of answers.
//!
//! [`Backend::check_now_each`]: crate::backend::Backend::check_now_each

use super::caches::Caches;
use super::pipeline::Pipeline;
use super::published::Entry;
use super::select::Pending;
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch, Check};
use crate::rules::FailMode;
use crate::stats::Event;
use crate::verdict::{HeaderItem, Outcome, RuleReport, Verdict};

/// A verdict being settled in place, one pending rule at a time, in rule
/// order. It borrows the verdict: a verdict is about 120 bytes, and each
/// move of it cost a copy per request.
pub(super) struct Settle<'l, 'v> {
    caches: &'l Caches,
    verdict: &'v mut Verdict,
    unavailable: bool,
    now: u64,
    local_rules: usize,
    reports: bool,
}

impl<'l, 'v> Settle<'l, 'v> {
    #[inline]
    pub(super) fn new(
        caches: &'l Caches,
        verdict: &'v mut Verdict,
        now: u64,
        local_rules: usize,
        reports: bool,
    ) -> Self {
        Self {
            caches,
            verdict,
            unavailable: false,
            now,
            local_rules,
            reports,
        }
    }

    /// Settles `p` if a cache answered it before the backend; false when it
    /// waits for the backend's answer.
    pub(super) fn cached<E: AsRef<Entry>>(&mut self, p: &Pending<E>) -> bool {
        match p.cached {
            Some(d) => {
                self.apply(p, Some(d), false, true);
                true
            }
            None => false,
        }
    }

    /// Settles `p` with its check and the backend's answer (either missing:
    /// the backend failed).
    #[inline(always)]
    pub(super) fn answered<E: AsRef<Entry>>(
        &mut self,
        p: &Pending<E>,
        check: Option<&Check>,
        answer: Option<Result<Decision, BackendError>>,
    ) {
        let (caches, now) = (self.caches, self.now);
        let (decision, failed, cached) = match (check, answer) {
            // The backend answered (the common case, without a call).
            (Some(check), Some(Ok(d))) => {
                caches.remember_refusal(check, &d, p.blocks, now);
                (Some(d), false, false)
            }
            (Some(check), answer) => caches.resolve(check, answer, now, self.local_rules),
            (None, _) => (None, true, false),
        };
        self.apply(p, decision, failed, cached);
    }

    /// Completes the verdict, once every rule is settled.
    #[inline]
    pub(super) fn done(self) {
        if self.verdict.outcome != Outcome::Limited && self.unavailable {
            self.verdict.outcome = Outcome::Unavailable;
            self.verdict.retry_after_ms = 1000;
        }
    }

    // Inlined into each caller: the decision is then not copied into
    // the call, and the tests of what the caller knows fold away.
    #[inline(always)]
    fn apply<E: AsRef<Entry>>(
        &mut self,
        p: &Pending<E>,
        decision: Option<Decision>,
        failed: bool,
        cached: bool,
    ) {
        let (verdict, now) = (&mut *self.verdict, self.now);
        let entry = p.entry.as_ref();
        let blocks = p.blocks;
        let Some(d) = decision else {
            // Failed open or closed, or untracked locally.
            if failed && entry.rule.fail_mode == FailMode::Closed && blocks {
                self.unavailable = true;
                entry.stats.record(Event::FailClosed);
            } else if failed {
                entry.stats.record(Event::FailOpen);
            }
            return;
        };
        if let (Some(until), true) = (d.blocked_until_ms, blocks && !cached) {
            self.caches.penalties.block(p.key, until, now);
        }
        let would_limit = !d.allowed && !blocks;
        if !d.allowed && blocks {
            verdict.outcome = Outcome::Limited;
            verdict.retry_after_ms = verdict.retry_after_ms.max(d.retry_after_ms);
            entry.stats.record(Event::Limited);
            entry.stats.record_subject(p.subject);
        } else if would_limit {
            verdict.would_limit.push(entry.rule.id.clone());
            entry.stats.record(Event::WouldLimit);
            entry.stats.record_subject(p.subject);
        } else {
            entry.stats.record(Event::Allowed);
        }
        if blocks && entry.rule.ratelimit_headers {
            let item = HeaderItem::of(entry.id.clone(), &entry.rule, d.remaining, d.reset_ms);
            verdict.headers.push(item);
        }
        if self.reports {
            verdict.reports.push(RuleReport {
                rule: entry.id.clone(),
                subject: p.subject,
                allowed: d.allowed,
                remaining: d.remaining,
                would_limit,
                failed,
                from_penalty_cache: cached,
            });
        }
    }
}

/// The one verdict loop: the selected rules in order, with the checks of
/// those that wait for the backend. Each backend answer goes to the next
/// waiting rule, the cached rules before it settled on the way; what is
/// left at the end is settled as cached or failed. The answers come as the
/// backend hands them over (the in-memory path, `check.rs`) or from a list
/// (after waiting, [`Pipeline::finish`]).
pub(super) struct Rules<'l, 'v, P, C> {
    settle: Settle<'l, 'v>,
    pending: P,
    checks: C,
}

impl<'l, 'v> Settle<'l, 'v> {
    /// The loop over `pending` (in rule order) and `checks` (the batch's).
    #[inline(always)]
    pub(super) fn rules<'s, 'a, E, P>(
        self,
        pending: P,
        checks: &'s [Check],
    ) -> Rules<'l, 'v, P::IntoIter, std::slice::Iter<'s, Check>>
    where
        E: AsRef<Entry> + 'a,
        P: IntoIterator<Item = &'a Pending<E>>,
    {
        Rules {
            settle: self,
            pending: pending.into_iter(),
            checks: checks.iter(),
        }
    }
}

impl<'s, 'l, 'v, 'a, E, P, C> Rules<'l, 'v, P, C>
where
    E: AsRef<Entry> + 'a,
    P: Iterator<Item = &'a Pending<E>>,
    C: Iterator<Item = &'s Check>,
{
    /// Applies the backend's next answer to the next rule waiting for it.
    #[inline(always)]
    pub(super) fn answer(&mut self, answer: Result<Decision, BackendError>) {
        for p in self.pending.by_ref() {
            if !self.settle.cached(p) {
                self.settle.answered(p, self.checks.next(), Some(answer));
                return;
            }
        }
    }

    /// Settles the rules left: cached ones, and those the backend left
    /// unanswered (failed); then completes the verdict.
    #[inline]
    pub(super) fn done(mut self) {
        for p in self.pending.by_ref() {
            if !self.settle.cached(p) {
                self.settle.answered(p, self.checks.next(), None);
            }
        }
        self.settle.done();
    }
}

impl Pipeline<'_> {
    /// Everything after the backend call: `answers` (one per check of
    /// `batch`, in order) applied to `verdict`.
    pub(super) fn finish<'a, E: AsRef<Entry> + 'a>(
        &self,
        mut verdict: Verdict,
        pending: impl IntoIterator<Item = &'a Pending<E>>,
        batch: &Batch,
        answers: Vec<Result<Decision, BackendError>>,
        local_rules: usize,
        reports: bool,
    ) -> Verdict {
        let caches = &self.inner.caches;
        let settle = Settle::new(caches, &mut verdict, batch.now_ms, local_rules, reports);
        let mut rules = settle.rules(pending, &batch.checks);
        for answer in answers {
            rules.answer(answer);
        }
        rules.done();
        verdict
    }
}
