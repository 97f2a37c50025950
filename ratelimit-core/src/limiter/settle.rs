//! The second half of a decision: each selected rule's answer (from the
//! penalty or over-limit cache, or the backend) settled in rule order,
//! with the fail modes (a failed check decided by its rule's `fail_mode`,
//! `Caches::fail_mode`), then handed to a [`Report`]: a request's verdict
//! (`settle/verdict.rs`) or a keyed call's answer (`keyed_hooks.rs`). It
//! writes to the `Caches` it is given and to its report, never to the
//! limiter. [`Settle`] takes the rules one at a time through one loop
//! ([`Rules`]), so that the in-memory path can apply each answer as the
//! backend hands it over ([`Backend::check_now_each`]) without collecting
//! them, and an awaited call its list of answers.
//!
//! [`Backend::check_now_each`]: crate::backend::Backend::check_now_each

use super::caches::Caches;
use super::select::Pending;
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch, Check};

mod verdict;

pub(super) use verdict::VerdictReport;

/// One rule's answer, settled: what the caches and the backend (or the
/// fail mode) decided, handed to the [`Report`] once the caches are updated.
#[derive(Debug, Clone, Copy)]
pub(super) struct Settled<'a> {
    /// `None`: failed open or closed, or untracked by the local fallback.
    pub(super) decision: Option<Decision>,
    /// The backend failed and no local count decided.
    pub(super) failed: bool,
    /// Answered by the penalty or over-limit cache, before the backend.
    pub(super) cached: bool,
    /// `decision` is the `fail_mode: local` fallback's: the backend failed.
    pub(super) fallback: bool,
    /// The backend's error, when it failed (`decision` is then the local
    /// fallback's, if any).
    pub(super) error: Option<&'a BackendError>,
}

/// Where settled answers go: a request's verdict and its rules' statistics
/// (`settle/verdict.rs`), the answer of one keyed call (`keyed_hooks.rs`),
/// or a batch of charges (`charge.rs`). The steps before (caches, backend,
/// fail modes) are [`Settle`]'s, the same for all.
pub(super) trait Report<E> {
    /// `p`'s answer, in rule order.
    fn settled(&mut self, p: &Pending<E>, s: Settled<'_>);
    /// Every rule is settled (nothing to complete unless the report says).
    fn done(&mut self) {}
}

/// Answers being settled, one pending rule at a time, in rule order, into
/// `out`. The report borrows what it writes: a verdict is about 120
/// bytes, and each move of it cost a copy per request.
pub(super) struct Settle<'l, O> {
    caches: &'l Caches,
    out: O,
    now: u64,
    local_rules: usize,
}

impl<'l, O> Settle<'l, O> {
    #[inline]
    pub(super) fn new(caches: &'l Caches, out: O, now: u64, local_rules: usize) -> Self {
        Self {
            caches,
            out,
            now,
            local_rules,
        }
    }

    /// Settles `p` if a cache answered it before the backend; false when it
    /// waits for the backend's answer.
    pub(super) fn cached<E>(&mut self, p: &Pending<E>) -> bool
    where
        O: Report<E>,
    {
        match p.cached {
            Some(d) => {
                let s = Settled {
                    decision: Some(d),
                    failed: false,
                    cached: true,
                    fallback: false,
                    error: None,
                };
                self.out.settled(p, s);
                true
            }
            None => false,
        }
    }

    /// Settles `p` with its check and the backend's answer (either missing:
    /// the backend failed): the over-limit cache remembers a refusal, the
    /// fail mode decides a failure, a penalty the backend started goes to
    /// the penalty cache, then `out` is told.
    // Inlined into each caller: the decision is then not copied into
    // the call, and the tests of what the caller knows fold away.
    #[inline(always)]
    pub(super) fn answered<E>(
        &mut self,
        p: &Pending<E>,
        check: Option<&Check>,
        answer: Option<&Result<Decision, BackendError>>,
    ) where
        O: Report<E>,
    {
        let (caches, now) = (self.caches, self.now);
        let (decision, backend_failed, error) = match (check, answer) {
            // The backend answered (the common case, without a call).
            (Some(check), Some(Ok(d))) => {
                caches.remember_refusal(check, d, p.blocks, now);
                (Some(*d), false, None)
            }
            (Some(check), answer) => {
                let error = answer.and_then(|a| a.as_ref().err());
                (caches.fail_mode(check, now, self.local_rules), true, error)
            }
            (None, _) => (None, true, None),
        };
        if let (Some(until), true) = (decision.and_then(|d| d.blocked_until_ms), p.blocks) {
            caches.penalties.block(p.key, until, now);
        }
        let s = Settled {
            decision,
            failed: decision.is_none() && backend_failed,
            cached: false,
            fallback: decision.is_some() && backend_failed,
            error,
        };
        self.out.settled(p, s);
    }
}

/// The one settling loop: the selected rules in order, with the checks of
/// those that wait for the backend. Each backend answer goes to the next
/// waiting rule, the cached rules before it settled on the way; what is
/// left at the end is settled as cached or failed. The answers come as the
/// backend hands them over (the in-memory path, `check.rs`) or from a list
/// (after waiting, [`finish`]).
pub(super) struct Rules<'l, O, P, C> {
    settle: Settle<'l, O>,
    pending: P,
    checks: C,
}

impl<'l, O> Settle<'l, O> {
    /// The loop over `pending` (in rule order) and `checks` (the batch's).
    #[inline(always)]
    pub(super) fn rules<'s, 'a, E, P>(
        self,
        pending: P,
        checks: &'s [Check],
    ) -> Rules<'l, O, P::IntoIter, std::slice::Iter<'s, Check>>
    where
        E: 'a,
        O: Report<E>,
        P: IntoIterator<Item = &'a Pending<E>>,
    {
        Rules {
            settle: self,
            pending: pending.into_iter(),
            checks: checks.iter(),
        }
    }
}

impl<'s, 'l, 'a, E, O, P, C> Rules<'l, O, P, C>
where
    E: 'a,
    O: Report<E>,
    P: Iterator<Item = &'a Pending<E>>,
    C: Iterator<Item = &'s Check>,
{
    /// Applies the backend's next answer to the next rule waiting for it.
    #[inline(always)]
    pub(super) fn answer(&mut self, answer: Result<Decision, BackendError>) {
        for p in self.pending.by_ref() {
            if !self.settle.cached(p) {
                // By reference: the answer is not copied on the way.
                self.settle.answered(p, self.checks.next(), Some(&answer));
                return;
            }
        }
    }

    /// Settles the rules left: cached ones, and those the backend left
    /// unanswered (failed); then completes the report.
    #[inline]
    pub(super) fn done(mut self) {
        for p in self.pending.by_ref() {
            if !self.settle.cached(p) {
                self.settle.answered(p, self.checks.next(), None);
            }
        }
        self.settle.out.done();
    }
}

/// Everything after the backend call: `answers` (one per check of
/// `batch`, in order) settled for `pending` into `out`: a waiting
/// request's verdict, a keyed call, a batch of charges.
pub(super) fn finish<'a, E: 'a, O: Report<E>>(
    caches: &Caches,
    out: O,
    pending: impl IntoIterator<Item = &'a Pending<E>>,
    batch: &Batch,
    answers: Vec<Result<Decision, BackendError>>,
    local_rules: usize,
) {
    let settle = Settle::new(caches, out, batch.now_ms, local_rules);
    let mut rules = settle.rules(pending, &batch.checks);
    for answer in answers {
        rules.answer(answer);
    }
    rules.done();
}
