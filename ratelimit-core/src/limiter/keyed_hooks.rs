//! The limiter's side of the keyed API ([`crate::keyed`]): finding a rule,
//! the hash key of keyed subjects, and one check through the penalty cache,
//! the backend (one call) and the rule's fail mode.

use std::sync::Arc;

use super::Limiter;
use crate::algorithm::Decision;
use crate::backend::{BackendError, BackendErrorKind, Batch, Check};
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

    /// Counts one keyed call: the penalty cache, then one backend call,
    /// then the rule's fail mode if the backend failed.
    pub(crate) async fn keyed_check(&self, check: Check, stats: Option<&RuleStats>) -> Answer {
        let record = |e: Event| {
            if let Some(s) = stats {
                s.record(e);
            }
        };
        let inner = &self.inner;
        let now = inner.clock.now_ms();
        if let Some(d) = inner.caches.penalties.refusal(&check.state_key, now) {
            record(Event::Limited);
            if let Some(s) = stats {
                s.record_subject(check.subject);
            }
            return Answer::Decided(d);
        }
        let batch = Batch::new(now, vec![check]);
        let answer = inner.backend.check(&batch).await.into_iter().next();
        let check = &batch.checks[0];
        let (decision, degraded) = match answer {
            Some(Ok(d)) => (d, false),
            other => {
                let err = match other {
                    Some(Err(e)) => e,
                    _ => BackendError::new(BackendErrorKind::Protocol, "no reply"),
                };
                match check.rule.fail_mode {
                    FailMode::Closed => {
                        record(Event::FailClosed);
                        return Answer::Failed(err);
                    }
                    FailMode::Local => {
                        let local_rules = self.published().local_rules;
                        match self
                            .inner
                            .caches
                            .resolve(check, Some(Err(err)), now, local_rules)
                            .0
                        {
                            Some(d) => (d, true),
                            None => {
                                record(Event::FailOpen);
                                return Answer::Degraded(None);
                            }
                        }
                    }
                    _ => {
                        record(Event::FailOpen);
                        return Answer::Degraded(None);
                    }
                }
            }
        };
        if let Some(until) = decision.blocked_until_ms {
            inner.caches.penalties.block(check.state_key, until, now);
        }
        if decision.allowed {
            record(Event::Allowed);
        } else {
            record(Event::Limited);
            if let Some(s) = stats {
                s.record_subject(check.subject);
            }
        }
        if degraded {
            Answer::Degraded(Some(decision))
        } else {
            Answer::Decided(decision)
        }
    }
}
