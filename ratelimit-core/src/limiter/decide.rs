//! Deciding one request: the whole flow of "How a request is checked", in
//! two halves around the one backend call: `begin` (backstop, selection,
//! keys, the penalty cache, the batch) and `finish` (answers, fail modes,
//! the verdict). `check.rs` runs them, with or without waiting.

use std::cell::RefCell;
use std::sync::Arc;

use super::charge::charge_item;
use super::inline::MAX_CHECKED;
use super::publish::{Entry, Published};
use super::select::{Selection, Selector};
use super::Limiter;
use crate::algorithm::{Decision, Quota};
use crate::backend::{state_key_with, Batch, Check, CheckMode, CheckResult};
use crate::rules::FailMode;
use crate::stats::Event;
use crate::verdict::{CountItem, HeaderItem, Outcome, Verdict};
use crate::{KeyDigest, RequestView};

/// One selected rule on its way to an answer. `E` holds its entry:
/// borrowed from the published set when the answer comes at once, shared
/// when it is awaited.
pub(super) struct Pending<E> {
    pub(super) entry: E,
    pub(super) subject: KeyDigest,
    pub(super) blocks: bool,
    /// The distinct value's bit (`distinct` rules).
    pub(super) bit: Option<u16>,
    /// Where the subject's state (and its penalty) is keyed.
    pub(super) key: KeyDigest,
    /// Answered before the backend (penalty cache).
    pub(super) cached: Option<Decision>,
}

impl Pending<&Arc<Entry>> {
    pub(super) fn to_shared(&self) -> Pending<Arc<Entry>> {
        Pending {
            entry: self.entry.clone(),
            subject: self.subject,
            blocks: self.blocks,
            bit: self.bit,
            key: self.key,
            cached: self.cached,
        }
    }
}

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
#[inline]
fn put_check(
    checks: &mut Vec<Check>,
    i: usize,
    entry: &Entry,
    subject: KeyDigest,
    state_key: KeyDigest,
    quota: Quota,
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

/// A request decided up to the backend call. Filled in place by
/// [`Limiter::begin`] (its lists live on the stack: moving them costs).
/// The selected rules (`sel.rules`) are the ones waiting for an answer.
pub(super) struct Plan<'p> {
    pub(super) sel: Selection<'p>,
}

impl Plan<'_> {
    // Inlined: the compiler then knows the lists start empty, and filling
    // them drops nothing.
    #[inline(always)]
    pub(super) fn new() -> Self {
        Self {
            sel: Selection::default(),
        }
    }
}

impl Limiter {
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
        if let Some(backstop) = &inner.backstop {
            if let Some(d) = backstop.check(req.client_ip(), now) {
                if !d.allowed {
                    inner.stats.backstop_limited();
                    let mut v = Verdict::forward();
                    v.outcome = Outcome::Limited;
                    v.retry_after_ms = d.retry_after_ms;
                    *verdict = v;
                    return true;
                }
            }
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
        selector.select(published, sel);
        if sel.capped {
            inner.stats.capped();
        }
        if sel.reject {
            let mut v = Verdict::forward();
            v.outcome = Outcome::BadRequest;
            *verdict = v;
            return true;
        }
        for e in &sel.would_reject {
            verdict.would_limit.push(e.rule.id.clone());
        }
        // Rules the cap left out: a running penalty still refuses, and
        // says so in its `RateLimit` item as a rule that ran would.
        for p in &sel.penalty_only {
            let key = state_key_with(&p.entry.ns_digest, &p.subject);
            if let (true, Some(until)) = (p.blocks, inner.penalties.blocked_until(&key, now)) {
                verdict.outcome = Outcome::Limited;
                verdict.retry_after_ms = verdict.retry_after_ms.max(until - now);
                p.entry.stats.record(Event::Limited);
                if p.entry.rule.ratelimit_headers {
                    let (id, left) = (p.entry.id.clone(), until - now);
                    let item = HeaderItem::of(id, &p.entry.rule, 0, left);
                    verdict.headers.push(item);
                }
            }
        }
        // Count rules at request time: only their blocks in the penalty cache.
        for c in sel.counts.drain() {
            let key = state_key_with(&c.entry.ns_digest, &c.subject);
            if let (true, Some(until)) = (c.blocks, inner.penalties.blocked_until(&key, now)) {
                verdict.outcome = Outcome::Limited;
                verdict.retry_after_ms = verdict.retry_after_ms.max(until - now);
                c.entry.stats.record(Event::Limited);
            }
            verdict.ticket.items.push(CountItem {
                rule: c.entry.rule.clone(),
                namespace: c.entry.namespace.clone(),
                subject: c.subject,
                state_key: key,
                blocks: c.blocks,
            });
        }

        let checks = &mut batch.checks;
        let mut used = 0;
        // In place: each selected rule is completed where selection put it.
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
            let cached = inner.penalties.blocked_until(&key, now).map(|until| {
                let mut d = Decision::deny(until - now, 0, until - now);
                d.blocked_until_ms = Some(until);
                d
            });
            let cached = cached.or_else(|| {
                let refused = || inner.overlimit.refused(&key, &entry.rule, cost, now);
                picked.blocks.then(refused).flatten()
            });
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
        false
    }

    /// Turns a backend answer (or its absence) into a decision, following
    /// the rule's `fail_mode` when the backend failed. Returns (decision,
    /// failed, from cache).
    pub(super) fn resolve(
        &self,
        check: &Check,
        answer: Option<CheckResult>,
        now: u64,
        local_rules: usize,
    ) -> (Option<Decision>, bool, bool) {
        match answer {
            Some(Ok(d)) => (Some(d), false, false),
            _ => {
                let rule = &check.rule;
                if rule.fail_mode != FailMode::Local {
                    return (None, true, false);
                }
                // In the check's mode: a probe counts nothing, a charge keeps
                // its whole cost (at this instance's share of the limit).
                let fleet = self.inner.fleet.fleet_size();
                let d = self
                    .inner
                    .local
                    .check_fallback(check, fleet, local_rules, now);
                (d, d.is_none(), false)
            }
        }
    }
}
