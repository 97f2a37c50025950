//! Gauges of the limiter's state, set when asked (at each scrape).
//!
//! The limiter counts events as they happen; its state (the switches, the
//! penalty cache's fill) is read here and written to gauges, so a
//! dashboard shows a switch left on, or a penalty cache filling up.

use crate::Limiter;

impl Limiter {
    /// Sets the state gauges from this limiter: call it just before
    /// rendering a scrape.
    ///
    /// - `ratelimit_switch_on{switch}`: 1 while the switch is on
    ///   (`disable_rate_limiting`, `disable_config_blocking`, `disable_jwt`).
    /// - `ratelimit_penalty_cache_blocks`: blocks the penalty cache holds.
    /// - `ratelimit_local_untracked`: subjects the local stores could not track.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::{rules::RuleSet, Limiter};
    ///
    /// let limiter = Limiter::new(RuleSet::from_json("[]").unwrap());
    /// limiter.set_state_gauges();
    /// ```
    pub fn set_state_gauges(&self) {
        let limiter = self;
        let sw = limiter.switches();
        let on = |b: bool| if b { 1.0 } else { 0.0 };
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_rate_limiting")
            .set(on(sw.rate_limiting_disabled()));
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_config_blocking")
            .set(on(sw.config_blocking_disabled()));
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_jwt")
            .set(on(sw.jwt_disabled()));
        metrics::gauge!("ratelimit_penalty_cache_blocks").set(limiter.penalty_cache().len() as f64);
        metrics::gauge!("ratelimit_local_untracked").set(limiter.local_untracked() as f64);
    }
}
