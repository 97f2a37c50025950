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
use super::select::Pending;
use super::settle::{finish, Report, Settled};
use crate::algorithm::Decision;
use crate::backend::{BackendError, Batch, Check, CheckMode};
use crate::stats::{Event, LimiterStats, RuleStats};
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

/// What reporting a settled charge needs of its rule: its statistics (read
/// when the charge was made, so that settling never looks the rule up
/// again), its id and the cost charged (for a lost charge's log).
#[derive(Debug)]
struct Charged {
    stats: Arc<RuleStats>,
    rule: Arc<str>,
    cost: u64,
}

/// A batch of charges' [`Report`]: a charge has no verdict. Over the limit,
/// a log rule counts `would_limit` (a blocking rule's penalty is in the
/// penalty cache already); a charge the backend did not take, nor the
/// local fallback, is lost: logged and counted.
struct ChargeReport<'s> {
    stats: &'s LimiterStats,
}

impl Report<Charged> for ChargeReport<'_> {
    fn settled(&mut self, p: &Pending<Charged>, s: Settled<'_>) {
        let charged = &p.entry;
        match s.decision {
            Some(d) if !d.allowed && p.blocks => {
                if let Some(until) = d.blocked_until_ms {
                    tracing::info!(rule = %charged.rule, subject = %p.subject, until, "charge over the limit: key blocked");
                }
            }
            Some(d) if !d.allowed => {
                charged.stats.record(Event::WouldLimit);
                charged.stats.record_subject(p.subject);
            }
            Some(_) => {}
            None => {
                let error = s
                    .error
                    .map_or_else(|| "no answer".to_owned(), |e| e.to_string());
                self.stats.charge_error();
                metrics::counter!("ratelimit_charge_errors_total", "rule" => charged.rule.to_string())
                    .increment(1);
                tracing::warn!(rule = %charged.rule, cost = charged.cost, %error, "charge lost: the backend did not answer");
            }
        }
    }
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
            charged.push(Pending {
                entry: Charged {
                    stats: entry.stats.clone(),
                    rule: entry.id.clone(),
                    cost,
                },
                subject: item.subject,
                blocks: item.blocks,
                bit: None,
                key: item.state_key,
                cached: None,
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

    /// After the backend's answers to a batch of charges: settled as a
    /// request's rules are (`settle.rs`: the over-limit cache remembers a
    /// charge over the limit as the refusal of a cost of 1, the penalty
    /// cache a penalty, the fail mode a failure) into a [`ChargeReport`].
    fn charged(
        &self,
        batch: &Batch,
        charged: &[Pending<Charged>],
        answers: Vec<Result<Decision, BackendError>>,
        local: usize,
    ) {
        let report = ChargeReport {
            stats: &self.inner.stats,
        };
        finish(&self.inner.caches, report, charged, batch, answers, local);
    }
}

#[cfg(test)]
mod tests;
