//! [`KeyedLimit::charge`]: a cost known once the work is done, charged
//! whether or not it fits.

use super::{Key, KeyedDecision, KeyedError, KeyedLimit};
use crate::backend::CheckMode;
use crate::limiter::Answer;

impl KeyedLimit {
    /// Charges `cost` to `key` after the work is done (tokens a model
    /// produced, rows a query returned): added whether or not it fits, so
    /// the total may pass the limit and the key's next checks are refused
    /// until the algorithm frees room again. The decision says whether the
    /// total is still within the limit; when it is not, `retry_after` is
    /// the wait until a call of cost 1 fits (or the penalty's end: a
    /// blocking rule with a penalty starts it). Under a running penalty
    /// nothing is added. Cost 0 charges nothing and reads the state, as
    /// [`KeyedLimit::peek`].
    ///
    /// Pairs with a rule that has `charge: response` (whose checks only ask
    /// whether the budget is spent), or with any quota.
    ///
    /// # Errors
    ///
    /// [`KeyedError::Backend`] when the backend failed and the fail mode is
    /// `closed` (`open` drops the charge, `local` charges here);
    /// [`KeyedError::UnknownRule`] or [`KeyedError::UnsupportedRule`] when
    /// the rule was published away.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use std::time::Duration;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::{Limiter, ManualClock};
    ///
    /// let limiter = Limiter::builder(RuleSet::default())
    ///     .clock(ManualClock::new(1_767_225_600_000))
    ///     .build();
    /// let tokens = limiter.keyed_quota("llm-tokens",
    ///     Quota::per_minute(NonZeroU32::new(1000).unwrap()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert!(tokens.peek("tenant-1").await?.is_allowed());
    /// // ... the model answers, having used 1500 tokens:
    /// let d = tokens.charge("tenant-1", 1500).await?;
    /// assert!(!d.is_allowed());
    /// assert_eq!(d.retry_after(), Some(Duration::from_secs(60)));
    /// assert!(!tokens.check("tenant-1").await?.is_allowed());
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn charge<K: Key + ?Sized>(
        &self,
        key: &K,
        cost: u64,
    ) -> Result<KeyedDecision, KeyedError> {
        if cost == 0 {
            return self.peek(key).await;
        }
        let r = self.resolve()?;
        let mut check = self
            .check_of(&r, key, Some(1))?
            .with_mode(CheckMode::Charge);
        check.quota = r.rule.quota(cost);
        // A charge is not a call: it counts in no statistics.
        match self.limiter.keyed_check(check, None).await {
            Answer::Decided(d) => Ok(KeyedDecision::from_decision(&d, false)),
            Answer::Degraded(Some(d)) => Ok(KeyedDecision::from_decision(&d, true)),
            Answer::Degraded(None) => Ok(KeyedDecision::failed_open()),
            Answer::Failed(e) => Err(KeyedError::Backend(e)),
        }
    }
}
