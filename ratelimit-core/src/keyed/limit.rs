//! [`KeyedLimit`]: a handle on one rule or one quota, checked for any key.

use std::sync::Arc;

use super::{Key, KeyWriter, KeyedDecision, KeyedError, Quota};
use crate::backend::{state_key_with, Check, CheckMode};
use crate::limiter::{Answer, KeyedHashKey, RuleTarget};
use crate::rules::Rule;
use crate::stats::RuleStats;
use crate::{KeyDigest, Limiter};

/// A limit checked for keys the caller supplies: one rule of the published
/// set ([`Limiter::keyed_rule`]) or a [`Quota`] declared in code
/// ([`Limiter::keyed_quota`]), on the limiter's backend (memory or Valkey,
/// one round trip per call).
///
/// Cheap to clone; clones share the limiter.
///
/// # Examples
///
/// ```
/// use std::num::NonZeroU32;
/// use ratelimit_core::keyed::Quota;
/// use ratelimit_core::rules::RuleSet;
/// use ratelimit_core::Limiter;
///
/// let limiter = Limiter::new(RuleSet::default());
/// let per_tenant = limiter.keyed_quota("jobs", Quota::per_minute(NonZeroU32::new(2).unwrap()));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(per_tenant.check(&("acme", 42u64)).await?.is_allowed());
/// assert!(per_tenant.check(&("acme", 42u64)).await?.is_allowed());
/// assert!(!per_tenant.check(&("acme", 42u64)).await?.is_allowed());
/// assert!(per_tenant.check(&("acme", 43u64)).await?.is_allowed()); // another key
/// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct KeyedLimit {
    pub(super) limiter: Limiter,
    target: Target,
    /// The keyed subjects' hash key when the handle was made (derived
    /// again on a call after the limiter's key changed).
    subjects: KeyedHashKey,
    pub(super) jitter_ms: u64,
}

#[derive(Debug, Clone)]
enum Target {
    /// A published rule, looked up on every call (publishing applies).
    Rule(Arc<str>),
    /// A quota, fixed when the handle was made.
    Quota(Arc<QuotaTarget>),
}

#[derive(Debug)]
struct QuotaTarget {
    rule: Arc<Rule>,
    namespace: Arc<str>,
    ns_digest: KeyDigest,
}

/// The rule a call runs under.
pub(super) struct Resolved {
    pub(super) rule: Arc<Rule>,
    namespace: Arc<str>,
    ns_digest: KeyDigest,
    pub(super) stats: Option<Arc<RuleStats>>,
}

impl Limiter {
    /// A keyed handle on published rule `id`: its algorithm, limit, period,
    /// burst, cost, penalty and fail mode apply; its expression, key parts,
    /// action, canary, allow list and expiry do not. Keyed calls count in the
    /// rule's state namespace (and its statistics) but under subjects of
    /// their own: they never share a count with HTTP requests.
    ///
    /// On a rule with `charge: response`, [`KeyedLimit::check`] and
    /// [`KeyedLimit::check_n`] only ask whether the budget is spent (they
    /// count nothing) and [`KeyedLimit::charge`] pays once the work is done.
    ///
    /// The rule is looked up on every call, so a publish applies to the
    /// handle. The emergency [`Switches`](crate::switches::Switches) are for
    /// HTTP requests: keyed calls do not read them.
    ///
    /// # Errors
    ///
    /// [`KeyedError::UnknownRule`], or [`KeyedError::UnsupportedRule`] for a
    /// `distinct` or a count rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let rules = RuleSet::from_json(r#"[{"id": "ws-messages", "expression": "false",
    ///     "algorithm": "token_bucket", "limit": 10, "period": "1s", "burst": 20,
    ///     "key": ["ip"], "fail_mode": "closed"}]"#).unwrap();
    /// let limiter = Limiter::new(rules);
    /// let messages = limiter.keyed_rule("ws-messages")?;
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let d = messages.check(&7u64).await?; // connection 7
    /// assert_eq!(d.remaining(), 19);
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # })?;
    /// assert!(limiter.keyed_rule("nope").is_err());
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// ```
    pub fn keyed_rule(&self, id: &str) -> Result<KeyedLimit, KeyedError> {
        let handle = self.keyed(Target::Rule(id.into()));
        handle.resolve()?;
        Ok(handle)
    }

    /// A keyed handle on `quota`, its state kept under `name`: handles of
    /// the same name and quota share counts (across a fleet too, on a shared
    /// backend); other names, and rules, never do.
    ///
    /// Logs a warning when waiting calls would get less than the quota's
    /// rate (see [`Quota::keeps_rate`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let github = limiter.keyed_quota("github", Quota::per_hour(NonZeroU32::new(5000).unwrap()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // An unkeyed (direct) limit: one counter for every caller.
    /// assert_eq!(github.check(&()).await?.remaining(), 4999);
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub fn keyed_quota(&self, name: &str, quota: Quota) -> KeyedLimit {
        if !quota.keeps_rate() {
            tracing::warn!(
                quota = name,
                limit = quota.limit().get(),
                period_ms = quota.period().as_millis() as u64,
                burst = quota.burst().get(),
                rate_keeping_burst = quota.rate_keeping_burst().get(),
                "keyed quota: calls that wait for each other get less than its rate (waits \
                 are whole ms and the burst cannot absorb the rounding); allow a burst of \
                 rate_keeping_burst or more"
            );
        }
        let namespace = quota.namespace(name);
        let target = QuotaTarget {
            rule: Arc::new(quota.rule(name)),
            ns_digest: crate::backend::Check::namespace_digest_of(&namespace),
            namespace: namespace.into(),
        };
        self.keyed(Target::Quota(Arc::new(target)))
    }

    fn keyed(&self, target: Target) -> KeyedLimit {
        KeyedLimit {
            limiter: self.clone(),
            target,
            subjects: self.keyed_hash_key(),
            jitter_ms: 0,
        }
    }
}

impl KeyedLimit {
    pub(super) fn resolve(&self) -> Result<Resolved, KeyedError> {
        match &self.target {
            Target::Quota(q) => Ok(Resolved {
                rule: q.rule.clone(),
                namespace: q.namespace.clone(),
                ns_digest: q.ns_digest,
                stats: None,
            }),
            Target::Rule(id) => {
                let RuleTarget {
                    rule,
                    namespace,
                    ns_digest,
                    stats,
                } = self
                    .limiter
                    .keyed_target(id)
                    .ok_or_else(|| KeyedError::UnknownRule(id.to_string()))?;
                let unsupported = |reason| KeyedError::UnsupportedRule {
                    id: id.to_string(),
                    reason,
                };
                if !rule.algorithm.takes_cost() {
                    return Err(unsupported("distinct counts values of a request"));
                }
                if rule.is_count_rule() {
                    return Err(unsupported("a count rule counts responses"));
                }
                Ok(Resolved {
                    rule,
                    namespace,
                    ns_digest,
                    stats: Some(stats),
                })
            }
        }
    }

    /// The subject `key` is counted under (as the rule statistics'
    /// `top_limited` report it).
    pub fn subject<K: Key + ?Sized>(&self, key: &K) -> KeyDigest {
        let hash_key = self.limiter.keyed_hash_key_now(&self.subjects);
        let mut w = KeyWriter::new(hash_key.hasher());
        key.write_key(&mut w);
        w.finish()
    }

    /// The check of `key` at `cost` (the rule's cost when `None`).
    pub(super) fn check_of<K: Key + ?Sized>(
        &self,
        r: &Resolved,
        key: &K,
        cost: Option<u64>,
    ) -> Result<Check, KeyedError> {
        let subject = self.subject(key);
        let quota = r.rule.quota(cost.unwrap_or(r.rule.cost).max(1));
        if quota.cost > quota.burst {
            return Err(KeyedError::InsufficientCapacity {
                cost: quota.cost,
                capacity: quota.burst,
            });
        }
        Ok(Check {
            algorithm: r.rule.algorithm,
            rule: r.rule.clone(),
            namespace: r.namespace.clone(),
            namespace_digest: r.ns_digest,
            subject,
            state_key: state_key_with(&r.ns_digest, &subject),
            quota,
            penalty_ms: r.rule.penalty_ms.filter(|_| r.rule.is_blocking()),
            bit: None,
            // A rule charged after the response is only asked (see `charge`).
            mode: if r.rule.charges_response() {
                CheckMode::Probe
            } else {
                CheckMode::Count
            },
        })
    }

    /// Counts one call for `key` at the default cost (the rule's `cost`, 1
    /// for a quota). See [`KeyedLimit::check_n`].
    ///
    /// # Errors
    ///
    /// As [`KeyedLimit::check_n`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let messages = limiter.keyed_quota("ws", Quota::per_second(NonZeroU32::new(20).unwrap()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let connection_id: u64 = 981;
    /// let d = messages.check(&connection_id).await?;
    /// if !d.is_allowed() {
    ///     // drop the message, or tell the client to slow down for d.retry_after()
    /// }
    /// assert_eq!(d.remaining(), 19);
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn check<K: Key + ?Sized>(&self, key: &K) -> Result<KeyedDecision, KeyedError> {
        self.check_cost(key, None).await
    }

    /// Counts one call for `key` costing `cost` (0 counts as 1, as for HTTP
    /// requests): admitted or refused with the time to wait.
    ///
    /// # Errors
    ///
    /// [`KeyedError::InsufficientCapacity`] when `cost` is larger than the
    /// burst (the limit, for windows): nothing is counted.
    /// [`KeyedError::Backend`] when the backend failed and the fail mode is
    /// `closed` (`open` admits, `local` counts here: see
    /// [`KeyedDecision::is_degraded`]). [`KeyedError::UnknownRule`] or
    /// [`KeyedError::UnsupportedRule`] when the rule was published away.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::{KeyedError, Quota};
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let tokens = limiter.keyed_quota("llm-tokens",
    ///     Quota::per_minute(NonZeroU32::new(1000).unwrap()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(tokens.check_n("tenant-1", 600).await.unwrap().remaining(), 400);
    /// assert!(!tokens.check_n("tenant-1", 600).await.unwrap().is_allowed());
    /// assert_eq!(
    ///     tokens.check_n("tenant-1", 1001).await,
    ///     Err(KeyedError::InsufficientCapacity { cost: 1001, capacity: 1000 })
    /// );
    /// # });
    /// ```
    pub async fn check_n<K: Key + ?Sized>(
        &self,
        key: &K,
        cost: u64,
    ) -> Result<KeyedDecision, KeyedError> {
        self.check_cost(key, Some(cost)).await
    }

    pub(super) async fn check_cost<K: Key + ?Sized>(
        &self,
        key: &K,
        cost: Option<u64>,
    ) -> Result<KeyedDecision, KeyedError> {
        let r = self.resolve()?;
        let check = self.check_of(&r, key, cost)?;
        match self.limiter.keyed_check(check, r.stats.as_deref()).await {
            Answer::Decided(d) => Ok(KeyedDecision::from_decision(&d, false)),
            Answer::Degraded(Some(d)) => Ok(KeyedDecision::from_decision(&d, true)),
            Answer::Degraded(None) => Ok(KeyedDecision::failed_open()),
            Answer::Failed(e) => Err(KeyedError::Backend(e)),
        }
    }

    /// Reads `key`'s state without counting: `remaining` and `reset` as a
    /// check would see them; `is_allowed` says whether a call of the
    /// default cost would pass now. `retry_after` is known only under a
    /// penalty (its end).
    ///
    /// # Errors
    ///
    /// [`KeyedError::Backend`] when the backend failed (the fail mode does
    /// not apply to reads), or the rule is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::new(3).unwrap()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// q.check("k").await?;
    /// assert_eq!(q.peek("k").await?.remaining(), 2);
    /// assert_eq!(q.peek("k").await?.remaining(), 2); // peeking counts nothing
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn peek<K: Key + ?Sized>(&self, key: &K) -> Result<KeyedDecision, KeyedError> {
        let r = self.resolve()?;
        let check = self.check_of(&r, key, None)?;
        let operator = self.limiter.operator();
        let d = (operator.peek_check(&check, false).await).map_err(KeyedError::Backend)?;
        let mut seen = d;
        if d.blocked_until_ms.is_none() {
            seen.allowed = d.allowed && d.remaining >= check.quota.cost;
            seen.retry_after_ms = 0;
        }
        Ok(KeyedDecision::from_decision(&seen, false))
    }

    /// Forgets `key`'s state, penalty included, in the backend and here
    /// (other instances' penalty caches keep a block they hold until it
    /// ends).
    ///
    /// # Errors
    ///
    /// [`KeyedError::Backend`] when the backend failed, or the rule is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::MIN));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert!(q.check(&7u32).await?.is_allowed());
    /// assert!(!q.check(&7u32).await?.is_allowed());
    /// q.reset(&7u32).await?;
    /// assert!(q.check(&7u32).await?.is_allowed());
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn reset<K: Key + ?Sized>(&self, key: &K) -> Result<(), KeyedError> {
        let r = self.resolve()?;
        let check = self.check_of(&r, key, Some(1))?;
        let operator = self.limiter.operator();
        (operator.reset_check(&check, false).await).map_err(KeyedError::Backend)
    }
}
