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
    /// // A debt of 500 tokens: a call of cost 1 fits once 501 are refilled,
    /// // at 1000 a minute (one per 60 ms).
    /// assert_eq!(d.retry_after(), Some(Duration::from_millis(30_060)));
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::rules::RuleSet;
    use crate::test_runtime::block_on;
    use crate::{Limiter, ManualClock};

    const T0: u64 = 1_767_225_600_000;

    fn limiter(extra: &str) -> (Limiter, ManualClock) {
        let json = format!(
            r#"[{{"id": "tokens", "expression": "false", "algorithm": "fixed_window",
            "limit": 10, "period": "1m", "key": ["ip"], "charge": "response"{extra}}}]"#
        );
        let clock = ManualClock::new(T0);
        let rules = RuleSet::from_json_at(&json, T0).unwrap();
        (Limiter::builder(rules).clock(clock.clone()).build(), clock)
    }

    #[test]
    fn a_response_rule_is_only_asked_by_check_and_paid_by_charge() {
        let (l, clock) = limiter("");
        let tokens = l.keyed_rule("tokens").unwrap();
        block_on(async {
            for _ in 0..20 {
                assert!(tokens.check("k").await.unwrap().is_allowed());
            }
            let d = tokens.charge("k", 0).await.unwrap();
            assert_eq!(d.remaining(), 10, "cost 0 charges nothing");
            let d = tokens.charge("k", 6).await.unwrap();
            assert!(d.is_allowed());
            let d = tokens.charge("k", 6).await.unwrap();
            assert_eq!(d.retry_after(), Some(Duration::from_secs(60)));
            clock.set_ms(T0 + 20_000);
            let d = tokens.check("k").await.unwrap();
            assert_eq!(d.retry_after(), Some(Duration::from_secs(40)));
            assert!(tokens.check("other").await.unwrap().is_allowed());
            let d = tokens.charge("huge", u64::MAX).await.unwrap();
            assert_eq!(d.retry_after(), Some(Duration::from_secs(40)));
        });
    }

    #[test]
    fn a_charge_past_the_limit_starts_the_penalty_and_one_under_it_adds_nothing() {
        let (l, clock) = limiter(r#", "penalty": "5m""#);
        let tokens = l.keyed_rule("tokens").unwrap();
        block_on(async {
            let d = tokens.charge("k", 11).await.unwrap();
            assert_eq!(d.retry_after(), Some(Duration::from_secs(300)));
            clock.set_ms(T0 + 100_000);
            let d = tokens.charge("k", 3).await.unwrap();
            assert_eq!(d.retry_after(), Some(Duration::from_secs(200)));
            clock.set_ms(T0 + 300_000);
            let d = tokens.charge("k", 3).await.unwrap();
            assert_eq!((d.is_allowed(), d.remaining()), (true, 7), "fresh after it");
        });
    }
}
