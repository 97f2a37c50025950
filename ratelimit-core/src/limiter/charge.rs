//! Charging after the response: rules with `charge: response` are asked at
//! request time only whether their budget is spent (a probe at cost 1) and
//! charged what the response reports it cost with [`Limiter::charge`], as
//! one batch of forced checks (one round trip).
//!
//! A charge over the limit on a blocking rule with a penalty puts the
//! subject in the penalty cache, as [`Limiter::record_response`] does; one
//! without a penalty puts (rule, subject, cost 1) in the over-limit cache
//! until its earliest admission. A log rule counts `would_limit` when a
//! charge passes its limit. The backend failing: `fail_mode: local` charges
//! the local store instead; otherwise the charge is lost, logged and
//! counted in `ratelimit_charge_errors_total`.

use super::future::ChargeFuture;
use super::published::{Entry, Published};
use super::Limiter;
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch, Check, CheckMode};
use crate::rules::FailMode;
use crate::stats::Event;
use crate::verdict::{ChargeItem, ResponseTicket};
use crate::KeyDigest;
use std::sync::Arc;

/// The ticket's item of a picked `charge: response` rule.
pub(super) fn charge_item(
    e: &Entry,
    subject: KeyDigest,
    blocks: bool,
    state_key: KeyDigest,
) -> ChargeItem {
    ChargeItem {
        rule: e.rule.clone(),
        namespace: e.namespace.clone(),
        namespace_digest: e.ns_digest,
        subject,
        state_key,
        blocks,
        penalty_ms: e.rule.penalty_ms.filter(|_| blocks),
    }
}

/// The published entry `item` charges: the same rule id with the same
/// state (namespace), still charged after the response. `None` when it was
/// published away: the charge is then dropped.
fn entry_of<'p>(p: &'p Published, item: &ChargeItem) -> Option<&'p Arc<Entry>> {
    p.site_wide.iter().chain(&p.others).find(|e| {
        e.rule.id == item.rule.id && e.namespace == item.namespace && e.rule.charges_response()
    })
}

impl Limiter {
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
        let items = ticket.charge_items();
        if cost == 0 || items.is_empty() {
            return ChargeFuture::done();
        }
        let published = self.inner.current.pin();
        let mut checks = Vec::with_capacity(items.len());
        let mut blocks = Vec::with_capacity(items.len());
        for item in items {
            let Some(entry) = entry_of(&published, item) else {
                tracing::debug!(rule = %item.rule.id, "charge dropped: the rule was published away");
                continue;
            };
            let rule = &entry.rule;
            checks.push(Check {
                algorithm: rule.algorithm,
                rule: rule.clone(),
                namespace: item.namespace.clone(),
                namespace_digest: item.namespace_digest,
                subject: item.subject,
                state_key: item.state_key,
                quota: rule.quota(cost),
                penalty_ms: item.penalty_ms,
                bit: None,
                mode: CheckMode::Charge,
            });
            blocks.push(item.blocks);
        }
        if checks.is_empty() {
            return ChargeFuture::done();
        }
        let batch = Batch::new(self.inner.clock.now_ms(), checks);
        let local_rules = published.local_rules;
        if let Some(answers) = self.inner.backend.check_now(&batch) {
            self.charged(&batch, &blocks, answers, local_rules);
            return ChargeFuture::done();
        }
        let limiter = self.clone();
        ChargeFuture::waiting(Box::pin(async move {
            let answers = limiter.inner.backend.check(&batch).await;
            limiter.charged(&batch, &blocks, answers, local_rules);
        }))
    }

    /// After the backend's answers to a batch of charges: the caches, the
    /// stats, the fail modes.
    fn charged(
        &self,
        batch: &Batch,
        blocks: &[bool],
        answers: Vec<Result<Decision, BackendError>>,
        local: usize,
    ) {
        let now = batch.now_ms;
        let mut answers = answers.into_iter();
        for (check, &blocks) in batch.checks.iter().zip(blocks) {
            let answer = answers.next();
            let rule = &check.rule;
            let decision = match answer {
                Some(Ok(d)) => {
                    if blocks {
                        // The refusal of a cost-1 request, until its earliest admission.
                        let mut probe = check.clone().with_mode(CheckMode::Probe);
                        probe.quota = probe.quota.with_cost(1);
                        self.inner.caches.remember_refusal(&probe, &d, true, now);
                    }
                    d
                }
                failed => {
                    let error = match failed {
                        Some(Err(e)) => e.to_string(),
                        _ => "no answer".to_owned(),
                    };
                    let local_answer = (rule.fail_mode == FailMode::Local)
                        .then(|| self.inner.caches.resolve(check, None, now, local).0)
                        .flatten();
                    let Some(d) = local_answer else {
                        self.inner.stats.charge_error();
                        metrics::counter!("ratelimit_charge_errors_total", "rule" => rule.id.clone())
                            .increment(1);
                        tracing::warn!(rule = %rule.id, cost = check.quota.cost, %error, "charge lost: the backend did not answer");
                        continue;
                    };
                    d
                }
            };
            if decision.allowed {
                continue;
            }
            if let (Some(until), true) = (decision.blocked_until_ms, blocks) {
                let stored = self
                    .inner
                    .caches
                    .penalties
                    .block(check.state_key, until, now);
                tracing::info!(rule = %rule.id, subject = %check.subject, until, stored, "charge over the limit: key blocked");
            }
            if !blocks {
                if let Some(stats) = self.rule_stats(&rule.id) {
                    stats.record(Event::WouldLimit);
                    stats.record_subject(check.subject);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
