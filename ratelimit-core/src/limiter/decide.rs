//! Deciding one request, the first half of "How a request is checked":
//! `begin` (backstop, selection, keys, the penalty cache, the batch) up to
//! the one backend call. The second half (answers, fail modes, the verdict)
//! is `settle.rs`; `check.rs` runs both, with or without waiting.

use std::cell::RefCell;
use std::sync::Arc;

use super::charge::charge_item;
use super::inline::MAX_CHECKED;
use super::pipeline::Pipeline;
use super::published::{Entry, Published};
use super::select::{Plan, Selection, Selector};
use crate::algorithm::{CheckQuota, Decision};
use crate::backend::{state_key_with, Batch, Check, CheckMode};
use crate::rules::Rule;
use crate::stats::Event;
use crate::verdict::{CountItem, HeaderItem, Outcome, Verdict};
use crate::{KeyDigest, RequestView};

thread_local! {
    /// This thread's batch: a request answered at once is planned into it
    /// in place (no `Vec` taken and given back, nothing moved), and it
    /// keeps the last request's checks whole: each check of the next
    /// request whose rule is the same (the same `Arc`) keeps its `Arc`s,
    /// so that a request touches no shared reference count for them. They
    /// hold their rules until then: a few superseded rules per thread at
    /// most, after a publish.
    static BATCH: RefCell<Batch> = const {
        RefCell::new(Batch {
            now_ms: 0,
            checks: Vec::new(),
        })
    };
}

/// Runs `f` on this thread's batch (see `BATCH`), or on a new one when
/// that one is in use (a backend deciding a request of its own while it
/// answers) or gone (the thread is exiting).
#[inline]
pub(super) fn with_batch<R>(mut f: impl FnMut(&mut Batch) -> R) -> R {
    let mine = BATCH.try_with(|b| b.try_borrow_mut().ok().map(|mut batch| f(&mut batch)));
    match mine {
        Ok(Some(r)) => r,
        _ => f(&mut Batch::default()),
    }
}

/// Leaves `batch` (answered at once) for the next request on this thread:
/// an unusually long list is not kept.
#[inline]
pub(super) fn keep_batch(batch: &mut Batch) {
    if batch.checks.capacity() > 2 * MAX_CHECKED {
        batch.checks = Vec::new();
    }
}

/// Sets `checks[i]` (`checks` has at least `i` items) to a check of
/// `entry`'s rule: the existing one when it is of the same rule (its
/// `Arc`s kept, no reference count touched), else a new one.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn put_check(
    checks: &mut Vec<Check>,
    i: usize,
    entry: &Entry,
    subject: KeyDigest,
    state_key: KeyDigest,
    quota: CheckQuota,
    penalty_ms: Option<u64>,
    bit: Option<u16>,
    mode: CheckMode,
) {
    match checks.get_mut(i) {
        Some(c)
            if Arc::ptr_eq(&c.rule, &entry.rule) && Arc::ptr_eq(&c.namespace, &entry.namespace) =>
        {
            c.namespace_digest = entry.ns_digest;
            c.subject = subject;
            c.state_key = state_key;
            c.quota = quota;
            c.penalty_ms = penalty_ms;
            c.bit = bit;
            c.mode = mode;
        }
        slot => {
            let c = Check {
                algorithm: entry.rule.algorithm,
                rule: entry.rule.clone(),
                namespace: entry.namespace.clone(),
                namespace_digest: entry.ns_digest,
                subject,
                state_key,
                quota,
                penalty_ms,
                bit,
                mode,
            };
            match slot {
                Some(old) => *old = c,
                None => checks.push(c),
            }
        }
    }
}

impl Pipeline<'_> {
    /// Everything before the backend call, into `plan` (new), `batch`
    /// (any: its checks are reused) and `verdict` (new): true when nothing
    /// is left to ask (the backstop refused, or a missing key rejects) and
    /// the verdict is decided.
    pub(super) fn begin<'p>(
        &self,
        req: &dyn RequestView,
        published: &'p Published,
        plan: &mut Plan<'p>,
        batch: &mut Batch,
        verdict: &mut Verdict,
    ) -> bool {
        let inner = &self.inner;
        let now = inner.clock.now_ms();
        if self.backstop_refuses(req, now, verdict) {
            return true;
        }
        let hash_key = self.hash_key();
        let selector = Selector {
            req,
            hash_key: &hash_key,
            switches: &inner.switches,
            now,
            prefix: Default::default(),
        };
        let sel = &mut plan.sel;
        selector.select(published, self.compiled(published), sel);
        if sel.capped {
            inner.stats.capped();
        }
        if sel.reject {
            let mut v = Verdict::forward();
            v.outcome = Outcome::BadRequest;
            *verdict = v;
            return true;
        }
        for e in sel.would_reject.iter() {
            verdict.would_limit.push(e.rule.id.clone());
        }
        self.penalties_only(sel, now, verdict);
        self.plan_checks(req, sel, now, batch, verdict);
        false
    }

    /// Step 1 of [`Pipeline::begin`]: the per-IP backstop, true when it
    /// refused (the verdict is then decided).
    #[inline(always)]
    pub(super) fn backstop_refuses(
        &self,
        req: &dyn RequestView,
        now: u64,
        verdict: &mut Verdict,
    ) -> bool {
        let inner = &self.inner;
        let Some(backstop) = &inner.backstop else {
            return false;
        };
        match backstop.check(req.client_ip(), now) {
            Some(d) if !d.allowed => {
                inner.stats.backstop_limited();
                let mut v = Verdict::forward();
                v.outcome = Outcome::Limited;
                v.retry_after_ms = d.retry_after_ms;
                *verdict = v;
                true
            }
            _ => false,
        }
    }

    /// Step 2 of [`Pipeline::begin`]: the rules not asked of the backend.
    /// Rules the cap left out: a running penalty still refuses. Count rules
    /// at request time: only their blocks in the penalty cache, and their
    /// items on the ticket for the response.
    #[inline(always)]
    fn penalties_only(&self, sel: &mut Selection<'_>, now: u64, verdict: &mut Verdict) {
        let penalties = &self.inner.caches.penalties;
        for p in sel.penalty_only.iter() {
            let key = state_key_with(&p.entry.ns_digest, &p.subject);
            if let (true, Some(until)) = (p.blocks, penalties.blocked_until(&key, now)) {
                limited(verdict, p.entry, until - now);
                // It says so in its `RateLimit` item as a rule that ran would.
                if p.entry.rule.ratelimit_headers {
                    let (id, left) = (p.entry.id.clone(), until - now);
                    let item = HeaderItem::of(id, &p.entry.rule, 0, left);
                    verdict.headers.push(item);
                }
            }
        }
        // By reference: a drain of the (usually empty) list cost about 15
        // instructions a request (`layer_calls` under callgrind).
        for c in sel.counts.iter() {
            let key = state_key_with(&c.entry.ns_digest, &c.subject);
            if let (true, Some(until)) = (c.blocks, penalties.blocked_until(&key, now)) {
                limited(verdict, c.entry, until - now);
            }
            verdict.ticket.push_count(CountItem {
                rule: c.entry.rule.clone(),
                namespace: c.entry.namespace.clone(),
                subject: c.subject,
                state_key: key,
                blocks: c.blocks,
            });
        }
    }

    /// Step 3 of [`Pipeline::begin`]: each selected rule answered by a
    /// cache, or planned into `batch` as a check (in place: each is
    /// completed where selection put it).
    #[inline(always)]
    fn plan_checks(
        &self,
        req: &dyn RequestView,
        sel: &mut Selection<'_>,
        now: u64,
        batch: &mut Batch,
        verdict: &mut Verdict,
    ) {
        let checks = &mut batch.checks;
        let mut used = 0;
        for picked in sel.rules.iter_mut() {
            let entry = picked.entry;
            let key = picked.key;
            // A rule charged after the response only asks, at cost 1,
            // whether its budget is spent; the response pays the cost.
            let (cost, mode) = if entry.rule.charges_response() {
                let item = charge_item(entry, picked.subject, picked.blocks, key);
                verdict.ticket.push_charge(item);
                (1, CheckMode::Probe)
            } else {
                (
                    req.cost().unwrap_or(entry.rule.cost).max(1),
                    CheckMode::Count,
                )
            };
            let cached = self.cached(&key, &entry.rule, picked.blocks, cost, now);
            if cached.is_none() {
                let rule = &entry.rule;
                let penalty_ms = rule.penalty_ms.filter(|_| picked.blocks);
                let (quota, bit) = (rule.quota(cost), picked.bit);
                put_check(
                    checks,
                    used,
                    entry,
                    picked.subject,
                    key,
                    quota,
                    penalty_ms,
                    bit,
                    mode,
                );
                used += 1;
            }
            // Selection left it `None`: written only when a cache answered
            // (a 48-byte store per rule otherwise).
            if cached.is_some() {
                picked.cached = cached;
            }
        }
        checks.truncate(used);
        batch.now_ms = now;
    }

    /// The answer of the penalty cache, else (a blocking rule) of the
    /// over-limit cache, for the state at `key`.
    #[inline(always)]
    pub(super) fn cached(
        &self,
        key: &KeyDigest,
        rule: &Arc<Rule>,
        blocks: bool,
        cost: u64,
        now: u64,
    ) -> Option<Decision> {
        let inner = &self.inner;
        let cached = inner.caches.penalties.refusal(key, now);
        cached.or_else(|| {
            let refused = || inner.caches.overlimit.refused(key, rule, cost, now);
            blocks.then(refused).flatten()
        })
    }
}

/// A running penalty refuses the request for `left` ms more.
#[inline(always)]
fn limited(verdict: &mut Verdict, entry: &Entry, left: u64) {
    verdict.outcome = Outcome::Limited;
    verdict.retry_after_ms = verdict.retry_after_ms.max(left);
    entry.stats.record(Event::Limited);
}
