//! Charging after the response (response accounting, [`Accounting`]):
//! rules with `charge: response` are asked at request time only whether
//! their budget is spent (a probe at cost 1) and charged what the response
//! reports it cost with [`Limiter::charge`](super::Limiter::charge), as one
//! batch of forced checks (one round trip).
//!
//! A charge over the limit on a blocking rule with a penalty puts the
//! subject in the penalty cache, as
//! [`Limiter::record_response`](super::Limiter::record_response) does; one
//! without a penalty puts (rule, subject, cost 1) in the over-limit cache
//! until its earliest admission. A log rule counts `would_limit` when a
//! charge passes its limit. The backend failing: `fail_mode: local` charges
//! the local store instead; otherwise the charge is lost, logged and
//! counted in `ratelimit_charge_errors_total`.

use super::accounting::Accounting;
use super::future::ChargeFuture;
use super::published::{Entry, Published};
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch, Check, CheckMode};
use crate::rules::FailMode;
use crate::stats::{Event, RuleStats};
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

/// What settling a charge needs of its rule beside the check: whether it
/// blocks, and its statistics (read when the charge was made, so that
/// settling never looks the rule up again).
#[derive(Debug)]
struct Charged {
    blocks: bool,
    stats: Arc<RuleStats>,
}

impl Accounting<'_> {
    /// See [`Limiter::charge`](super::Limiter::charge).
    pub(crate) fn charge(&self, ticket: &ResponseTicket, cost: u64) -> ChargeFuture {
        let items = ticket.charge_items();
        if cost == 0 || items.is_empty() {
            return ChargeFuture::done();
        }
        let published = self.inner.current.pin();
        let mut checks = Vec::with_capacity(items.len());
        let mut charged = Vec::with_capacity(items.len());
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
            charged.push(Charged {
                blocks: item.blocks,
                stats: entry.stats.clone(),
            });
        }
        if checks.is_empty() {
            return ChargeFuture::done();
        }
        let batch = Batch::new(self.inner.clock.now_ms(), checks);
        let local_rules = published.local_rules;
        if let Some(answers) = self.inner.backend.check_now(&batch) {
            self.charged(&batch, &charged, answers, local_rules);
            return ChargeFuture::done();
        }
        let inner = Arc::clone(self.inner);
        ChargeFuture::waiting(Box::pin(async move {
            let answers = inner.backend.check(&batch).await;
            let accounting = Accounting { inner: &inner };
            accounting.charged(&batch, &charged, answers, local_rules);
        }))
    }

    /// After the backend's answers to a batch of charges: the caches, the
    /// stats, the fail modes.
    fn charged(
        &self,
        batch: &Batch,
        charged: &[Charged],
        answers: Vec<Result<Decision, BackendError>>,
        local: usize,
    ) {
        let now = batch.now_ms;
        let mut answers = answers.into_iter();
        for (check, charged) in batch.checks.iter().zip(charged) {
            let blocks = charged.blocks;
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
                        .then(|| self.inner.caches.fail_mode(check, now, local))
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
                charged.stats.record(Event::WouldLimit);
                charged.stats.record_subject(check.subject);
            }
        }
    }
}

#[cfg(test)]
mod tests;
