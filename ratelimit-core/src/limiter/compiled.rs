//! The compiled plan: a rule set whose whole work per request is known when
//! it is published runs that work alone, without the general selection.
//!
//! Today's one plan: the set's only rule is a plain site-wide rule keyed on
//! the client address (`"expression": "true"`, `"key": ["ip"]`; no expiry,
//! allow list, distinct value, canary, `count_statuses` or
//! `charge: response`), the shape of a per-IP limiter. Every request then
//! runs exactly that rule: the address's subject, its state key, the
//! penalty and over-limit caches, one check. The plan skips the selection's
//! loops over the three rule groups, the lists they fill and the steps that
//! find those lists empty; everything else (the backstop, the emergency
//! switches, the caches, the backend call, settling the answer, the wait
//! for a backend that does I/O) is the general path's own code, so the
//! verdicts, the stats and the stored state are the same (the differential
//! proptest in `compiled/tests.rs` runs both on random rule sets).
//!
//! Every backend, the in-memory one included, answers the plan's check
//! through the same seam as any batch ([`Backend::check_now_each`], else
//! [`Backend::check`]): the limiter never asks which backend it has.
//!
//! [`Backend::check_now_each`]: crate::backend::Backend::check_now_each
//! [`Backend::check`]: crate::backend::Backend::check

use std::sync::Arc;

use super::decide::put_check;
use super::future::VerdictFuture;
use super::published::{Entry, Published};
use super::select::{Pending, Selector};
use super::Limiter;
use crate::algorithm::CheckQuota;
use crate::backend::{state_key_with, Batch, CheckMode};
use crate::subject::ip_subject;
use crate::RequestView;

impl Limiter {
    /// The rule the compiled plan of `published` runs, if it has one.
    #[inline(always)]
    pub(super) fn compiled<'p>(&self, published: &'p Published) -> Option<&'p Arc<Entry>> {
        #[cfg(test)]
        if self.inner.general_only {
            return None;
        }
        published.compiled.as_ref()
    }

    /// [`Limiter::decide_in`](super::Limiter) for a set whose compiled plan
    /// runs `e` alone: the same steps as the general path for that set
    /// (`Limiter::begin`), with nothing selected but `e`.
    #[inline(always)]
    pub(super) fn decide_compiled(
        &self,
        e: &Arc<Entry>,
        req: &dyn RequestView,
        local_rules: usize,
        reports: bool,
        batch: &mut Batch,
        out: &mut VerdictFuture,
    ) {
        let Some(verdict) = out.ready_mut() else {
            return;
        };
        let now = self.inner.clock.now_ms();
        if self.backstop_refuses(req, now, verdict) {
            return;
        }
        let plan = self.plan_compiled(e, req, now);
        let mut used = 0;
        if plan.pending.cached.is_none() {
            let p = &plan.pending;
            let mode = CheckMode::Count;
            let (subject, key, quota) = (p.subject, p.key, plan.quota);
            put_check(
                &mut batch.checks,
                0,
                e,
                subject,
                key,
                quota,
                plan.penalty_ms,
                None,
                mode,
            );
            used = 1;
        }
        batch.checks.truncate(used);
        batch.now_ms = now;
        let pending = std::slice::from_ref(&plan.pending);
        self.settle_or_wait(pending, local_rules, reports, batch, out);
    }

    /// The plan's steps before the backend, after the backstop (which
    /// settles the verdict when it refuses), at `now`.
    #[inline(always)]
    fn plan_compiled<'e>(
        &self,
        e: &'e Arc<Entry>,
        req: &dyn RequestView,
        now: u64,
    ) -> Compiled<'e> {
        let inner = &self.inner;
        let hash_key = self.hash_key();
        let subject = ip_subject(&hash_key, req.client_ip());
        if e.stats.wants_label(&subject) {
            let selector = Selector {
                req,
                hash_key: &hash_key,
                switches: &inner.switches,
                now,
                prefix: Default::default(),
            };
            selector.give_label(e, subject);
        }
        let blocks = (inner.switches).blocks(e.rule.is_blocking(), e.added_at_run_time);
        let key = state_key_with(&e.ns_digest, &subject);
        let cost = req.cost().unwrap_or(e.rule.cost).max(1);
        let cached = self.cached(&key, e, blocks, cost, now);
        let rule = &e.rule;
        Compiled {
            pending: Pending {
                entry: e,
                subject,
                blocks,
                bit: None,
                key,
                cached,
            },
            quota: rule.quota(cost),
            penalty_ms: rule.penalty_ms.filter(|_| blocks),
        }
    }
}

/// The compiled plan's rule before the backend: pending, with its check's
/// quota and penalty.
struct Compiled<'e> {
    pending: Pending<&'e Arc<Entry>>,
    quota: CheckQuota,
    penalty_ms: Option<u64>,
}

#[cfg(test)]
mod tests;
