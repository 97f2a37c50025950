//! [`Limiter::check`]: a request decided in the call when the backend
//! answers without waiting ([`Backend::check_now`]), else the backend call
//! and the rest of the decision left to one boxed `'static` future.
//!
//! [`Backend::check_now`]: crate::backend::Backend::check_now

use std::sync::Arc;

use super::decide::{keep_batch, with_batch};
use super::future::VerdictFuture;
use super::pipeline::Pipeline;
use super::published::{Entry, Published};
use super::select::{Pending, Plan};
use super::settle::{finish, Settle, VerdictReport};
use super::Limiter;
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch};
use crate::{RequestView, Verdict};

impl Limiter {
    /// Decides one request: any [`RequestView`], such as
    /// [`RequestAttrs`](crate::RequestAttrs) or a view borrowed from the
    /// server's own request type (as the tower layer does).
    ///
    /// With the in-memory backend the returned future is ready at once
    /// ([`VerdictFuture::into_ready`]); it never borrows `self` or `req`.
    /// [`Verdict::reports`](crate::Verdict::reports) is filled only when asked
    /// ([`LimiterBuilder::reports`](super::LimiterBuilder::reports),
    /// [`Snapshot::reports`](super::Snapshot::reports)) or while `tracing`
    /// is enabled at debug level for this crate.
    pub fn check(&self, req: &dyn RequestView) -> VerdictFuture {
        let pipeline = self.pipeline();
        (self.inner.current).with(|published| pipeline.decide(published, req, false))
    }
}

impl Pipeline<'_> {
    /// [`Limiter::check`] against `published`; `reports` fills
    /// [`Verdict::reports`](crate::Verdict::reports).
    pub(super) fn decide(
        &self,
        published: &Published,
        req: &dyn RequestView,
        reports: bool,
    ) -> VerdictFuture {
        let reports = reports || self.inner.reports || tracing::enabled!(tracing::Level::DEBUG);
        // Decided in place, in the future returned (a verdict is copied
        // whole at every hand-over).
        let mut out = VerdictFuture::ready(Verdict::forward());
        with_batch(|batch| self.decide_in(published, req, reports, batch, &mut out));
        out
    }

    /// [`Pipeline::decide`] into `out` (ready, with a new verdict), with
    /// `batch` (this thread's, see `decide::with_batch`) to plan the
    /// backend call into.
    #[inline(always)]
    fn decide_in(
        &self,
        published: &Published,
        req: &dyn RequestView,
        reports: bool,
        batch: &mut Batch,
        out: &mut VerdictFuture,
    ) {
        let local_rules = published.local_rules;
        let Some(verdict) = out.ready_mut() else {
            return;
        };
        let mut plan = Plan::new();
        if self.begin(req, published, &mut plan, batch, verdict) {
            return;
        }
        let pending = plan.sel.rules.iter().as_slice();
        self.settle_or_wait(pending, local_rules, reports, batch, out);
    }

    /// The rest of a decision planned into `batch` (`pending`, the rules
    /// waiting for an answer, in order): settled in place when the backend
    /// answers at once, else left to the future put in `out`.
    #[inline(always)]
    pub(super) fn settle_or_wait(
        &self,
        pending: &[Pending<&Arc<Entry>>],
        local_rules: usize,
        reports: bool,
        batch: &mut Batch,
        out: &mut VerdictFuture,
    ) {
        let Some(verdict) = out.ready_mut() else {
            return;
        };
        // Answered at once (the in-memory store): each answer is applied as
        // the backend hands it over (nothing collected), to the verdict in
        // place, and the batch is left for the next request.
        let now = batch.now_ms;
        let report = VerdictReport::new(verdict, reports);
        let settle = Settle::new(&self.inner.caches, report, now, local_rules);
        let mut rules = settle.rules(pending.iter(), &batch.checks);
        let mut each = |answer: Result<Decision, BackendError>| rules.answer(answer);
        let at_once =
            batch.checks.is_empty() || (self.inner.backend).check_now_each(batch, &mut each);
        if at_once {
            rules.done();
            keep_batch(batch);
            return;
        }
        let pending: Vec<_> = pending.iter().map(Pending::to_shared).collect();
        let mut verdict = std::mem::replace(verdict, Verdict::forward());
        let batch = std::mem::take(batch);
        let inner = self.inner.clone();
        *out = VerdictFuture::waiting(Box::pin(async move {
            let answers = inner.backend.check(&batch).await;
            let report = VerdictReport::new(&mut verdict, reports);
            finish(
                &inner.caches,
                report,
                &pending,
                &batch,
                answers,
                local_rules,
            );
            verdict
        }));
    }
}
