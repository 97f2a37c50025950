//! The limiter's side of the keyed API ([`crate::keyed`]): finding a rule,
//! the hash key of keyed subjects, and one keyed call through the steps of
//! a request (the caches, one backend call, `settle.rs`), answered as a
//! decision instead of a verdict.

use std::sync::Arc;

use super::select::Pending;
use super::settle::{finish, Report, Settled};
use super::Limiter;
use crate::algorithm::Decision;
use crate::backend::{BackendError, BackendErrorKind, Batch, Check, CheckMode};
use crate::rules::{FailMode, Rule};
use crate::stats::{Event, RuleStats};
use crate::HashKey;

/// Derives the hash key of keyed subjects from the limiter's: keyed and
/// HTTP subjects are unrelated digests, so a keyed call never lands on a
/// subject of an HTTP request.
const KEYED_LABEL: &[u8] = b"ratelimit-core/keyed-subjects/v1";

/// A limiter's hash key and the keyed subjects' key derived from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyedHashKey {
    base: HashKey,
    derived: HashKey,
}

/// A published rule, as the keyed API uses it.
#[derive(Debug, Clone)]
pub(crate) struct RuleTarget {
    pub(crate) rule: Arc<Rule>,
    pub(crate) namespace: Arc<str>,
    pub(crate) ns_digest: crate::KeyDigest,
    pub(crate) stats: Arc<RuleStats>,
}

/// One keyed check's outcome.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The backend (or the penalty cache) decided.
    Decided(Decision),
    /// The backend failed; the fail mode decided (`None`: failed open).
    Degraded(Option<Decision>),
    /// The backend failed and the rule fails closed.
    Failed(BackendError),
}

impl Limiter {
    /// The published rule `id`, if any.
    pub(crate) fn keyed_target(&self, id: &str) -> Option<RuleTarget> {
        let p = self.published();
        let e = p
            .site_wide
            .iter()
            .chain(&p.others)
            .chain(&p.counts)
            .find(|e| e.rule.id == id)?;
        Some(RuleTarget {
            rule: e.rule.clone(),
            namespace: e.namespace.clone(),
            ns_digest: e.ns_digest,
            stats: e.stats.clone(),
        })
    }

    /// The limiter's hash key now and the hash key of keyed subjects
    /// derived from it.
    pub(crate) fn keyed_hash_key(&self) -> KeyedHashKey {
        let base = self.hash_key();
        KeyedHashKey {
            base,
            derived: base.derive(KEYED_LABEL),
        }
    }

    /// The hash key of keyed subjects now: `cached`'s while the limiter's
    /// key is the one it was derived from, else derived again (the backend
    /// learnt or replaced the fleet's key since).
    pub(crate) fn keyed_hash_key_now(&self, cached: &KeyedHashKey) -> HashKey {
        let base = self.hash_key();
        if base == cached.base {
            cached.derived
        } else {
            base.derive(KEYED_LABEL)
        }
    }

    /// Counts one keyed call through the request's steps, as a batch of
    /// one check: the caches (`Pipeline::cached`; a charge asks only the
    /// penalty cache, as it is never refused for being over the limit),
    /// one backend call, then `settle.rs` (caches, fail mode) into a
    /// [`KeyedReport`]. `stats`: the rule's statistics, when the call
    /// counts in them.
    pub(crate) async fn keyed_check(&self, check: Check, stats: Option<&RuleStats>) -> Answer {
        let pipeline = self.pipeline();
        let now = self.inner.clock.now_ms();
        let key = check.state_key;
        let cached = match check.mode {
            CheckMode::Count => pipeline.cached(&key, &check.rule, true, check.quota.cost, now),
            _ => self.inner.caches.penalties.refusal(&key, now),
        };
        let pending = Pending {
            entry: (),
            subject: check.subject,
            blocks: true,
            bit: check.bit,
            key,
            cached,
        };
        let mut report = KeyedReport {
            stats,
            fail_mode: check.rule.fail_mode,
            answer: None,
        };
        // Answered by a cache: nothing to ask the backend.
        let checks = if cached.is_some() {
            Vec::new()
        } else {
            vec![check]
        };
        let batch = Batch::new(now, checks);
        let answers = if batch.checks.is_empty() {
            Vec::new()
        } else {
            self.inner.backend.check(&batch).await
        };
        let local_rules = self.published().local_rules;
        let caches = &self.inner.caches;
        finish(
            caches,
            &mut report,
            [&pending],
            &batch,
            answers,
            local_rules,
        );
        // `finish` settles every pending rule, this one included.
        report.answer.unwrap_or_else(|| Answer::Failed(no_reply()))
    }
}

/// A keyed call's [`Report`]: the one rule's answer, counted in its
/// statistics when it has them.
struct KeyedReport<'s> {
    stats: Option<&'s RuleStats>,
    fail_mode: FailMode,
    answer: Option<Answer>,
}

impl KeyedReport<'_> {
    fn record(&self, e: Event) {
        if let Some(s) = self.stats {
            s.record(e);
        }
    }
}

impl Report<()> for &mut KeyedReport<'_> {
    fn settled(&mut self, p: &Pending<()>, s: Settled<'_>) {
        let answer = match s.decision {
            Some(d) => {
                if d.allowed {
                    self.record(Event::Allowed);
                } else {
                    self.record(Event::Limited);
                    if let Some(stats) = self.stats {
                        stats.record_subject(p.subject);
                    }
                }
                match s.fallback {
                    true => Answer::Degraded(Some(d)),
                    false => Answer::Decided(d),
                }
            }
            None if self.fail_mode == FailMode::Closed => {
                self.record(Event::FailClosed);
                Answer::Failed(s.error.cloned().unwrap_or_else(no_reply))
            }
            None => {
                self.record(Event::FailOpen);
                Answer::Degraded(None)
            }
        };
        self.answer = Some(answer);
    }
}

/// The error of a check the backend left without an answer.
fn no_reply() -> BackendError {
    BackendError::new(BackendErrorKind::Protocol, "no reply")
}
