//! Deciding one request: the whole flow of "How a request is checked".

use super::select::{Picked, Selector};
use super::Limiter;
use crate::algorithm::Decision;
use crate::backend::{state_key, Batch, Check, CheckResult};
use crate::local::share_of;
use crate::rules::FailMode;
use crate::stats::Event;
use crate::verdict::{CountItem, HeaderItem, Outcome, RuleReport, Verdict};
use crate::RequestAttrs;

/// One selected rule on its way to an answer.
struct Pending<'p> {
    picked: Picked<'p>,
    check: Check,
    /// Answered before the backend (penalty cache).
    cached: Option<Decision>,
}

impl Limiter {
    /// Decides one request.
    pub async fn check(&self, req: &RequestAttrs) -> Verdict {
        let inner = &self.inner;
        let now = inner.clock.now_ms();
        if let Some(backstop) = &inner.backstop {
            if let Some(d) = backstop.check(req.client_ip, now) {
                if !d.allowed {
                    inner.stats.backstop_limited();
                    let mut v = Verdict::forward();
                    v.outcome = Outcome::Limited;
                    v.retry_after_ms = d.retry_after_ms;
                    return v;
                }
            }
        }
        let published = self.published();
        let selector = Selector {
            req,
            hash_key: &inner.hash_key,
            switches: &inner.switches,
            now,
        };
        let sel = selector.select(&published);
        if sel.capped {
            inner.stats.capped();
        }
        let mut verdict = Verdict::forward();
        if sel.reject {
            verdict.outcome = Outcome::BadRequest;
            return verdict;
        }
        // Count rules at request time: only their blocks in the penalty cache.
        for c in sel.counts {
            let key = state_key(&c.entry.namespace, &c.subject);
            if let (true, Some(until)) = (c.blocks, inner.penalties.blocked_until(&key, now)) {
                verdict.outcome = Outcome::Limited;
                verdict.retry_after_ms = verdict.retry_after_ms.max(until - now);
                c.entry.stats.record(&c.entry.rule.id, Event::Limited);
            }
            verdict.ticket.items.push(CountItem {
                rule: c.entry.rule.clone(),
                namespace: c.entry.namespace.clone(),
                subject: c.subject,
                blocks: c.blocks,
            });
        }
        verdict.ticket.rules_sharing = published.counts.len();

        let mut pending: Vec<Pending<'_>> = sel
            .rules
            .into_iter()
            .map(|picked| {
                let rule = &picked.entry.rule;
                let key = state_key(&picked.entry.namespace, &picked.subject);
                let cached = inner.penalties.blocked_until(&key, now).map(|until| {
                    let mut d = Decision::deny(until - now, 0, until - now);
                    d.blocked_until_ms = Some(until);
                    d
                });
                let check = Check {
                    rule: rule.clone(),
                    namespace: picked.entry.namespace.clone(),
                    subject: picked.subject,
                    state_key: key,
                    quota: rule.quota(req.cost.unwrap_or(rule.cost).max(1)),
                    penalty_ms: rule.penalty_ms.filter(|_| picked.blocks),
                    bit: picked.bit,
                };
                Pending {
                    picked,
                    check,
                    cached,
                }
            })
            .collect();

        let batch = Batch::new(
            now,
            pending
                .iter()
                .filter(|p| p.cached.is_none())
                .map(|p| p.check.clone())
                .collect(),
        );
        let mut answers = if batch.checks.is_empty() {
            Vec::new()
        } else {
            inner.backend.check(&batch).await
        }
        .into_iter();

        let mut unavailable = false;
        for p in &mut pending {
            let (decision, failed, cached) = match p.cached {
                Some(d) => (Some(d), false, true),
                None => {
                    let answer = answers.next();
                    self.resolve(p, answer, now, published.local_rules)
                }
            };
            let entry = p.picked.entry;
            let id = &entry.rule.id;
            let Some(d) = decision else {
                // Failed open or closed, or untracked locally.
                if failed && entry.rule.fail_mode == FailMode::Closed && p.picked.blocks {
                    unavailable = true;
                    entry.stats.record(id, Event::FailClosed);
                } else if failed {
                    entry.stats.record(id, Event::FailOpen);
                }
                continue;
            };
            if let (Some(until), true) = (d.blocked_until_ms, p.picked.blocks && !cached) {
                inner.penalties.block(p.check.state_key, until, now);
            }
            let would_limit = !d.allowed && !p.picked.blocks;
            if !d.allowed && p.picked.blocks {
                verdict.outcome = Outcome::Limited;
                verdict.retry_after_ms = verdict.retry_after_ms.max(d.retry_after_ms);
                entry.stats.record(id, Event::Limited);
                entry.stats.record_subject(p.picked.subject);
            } else if would_limit {
                verdict.would_limit.push(id.clone());
                entry.stats.record(id, Event::WouldLimit);
                entry.stats.record_subject(p.picked.subject);
            } else {
                entry.stats.record(id, Event::Allowed);
            }
            if p.picked.blocks && entry.rule.ratelimit_headers {
                verdict.headers.push(HeaderItem {
                    id: id.clone(),
                    quota: entry.rule.limit,
                    window_s: entry.rule.period_ms / 1000,
                    remaining: d.remaining,
                    reset_s: d.reset_ms.div_ceil(1000),
                });
            }
            verdict.reports.push(RuleReport {
                rule: id.clone(),
                subject: p.picked.subject,
                allowed: d.allowed,
                remaining: d.remaining,
                would_limit,
                failed,
                from_penalty_cache: cached,
            });
        }
        if verdict.outcome != Outcome::Limited && unavailable {
            verdict.outcome = Outcome::Unavailable;
            verdict.retry_after_ms = 1000;
        }
        verdict
    }

    /// Turns a backend answer (or its absence) into a decision, following
    /// the rule's `fail_mode` when the backend failed. Returns (decision,
    /// failed, from cache).
    fn resolve(
        &self,
        p: &Pending<'_>,
        answer: Option<CheckResult>,
        now: u64,
        local_rules: usize,
    ) -> (Option<Decision>, bool, bool) {
        match answer {
            Some(Ok(d)) => (Some(d), false, false),
            _ => {
                let rule = &p.check.rule;
                if rule.fail_mode != FailMode::Local {
                    return (None, true, false);
                }
                let fleet = self.inner.fleet.fleet_size();
                let quota = share_of(p.check.quota, fleet);
                let d = self.inner.local.check(
                    rule,
                    &p.check.namespace,
                    local_rules,
                    &p.check.subject,
                    now,
                    &quota,
                    p.check.penalty_ms,
                    p.check.bit,
                );
                (d, d.is_none(), false)
            }
        }
    }
}
