//! Gauges of the limiter's state, set when asked (at each scrape): the
//! operator's side ([`Operator`]).
//!
//! The limiter counts events as they happen; its state (the switches, the
//! penalty cache's fill) is read here and written to gauges, so a
//! dashboard shows a switch left on, or a penalty cache filling up.

use super::operator::Operator;

impl Operator<'_> {
    /// See [`Limiter::set_state_gauges`](super::Limiter::set_state_gauges).
    pub(crate) fn set_state_gauges(&self) {
        let sw = self.switches();
        let on = |b: bool| if b { 1.0 } else { 0.0 };
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_rate_limiting")
            .set(on(sw.rate_limiting_disabled()));
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_config_blocking")
            .set(on(sw.config_blocking_disabled()));
        metrics::gauge!("ratelimit_switch_on", "switch" => "disable_jwt")
            .set(on(sw.jwt_disabled()));
        metrics::gauge!("ratelimit_penalty_cache_blocks").set(self.penalty_cache().len() as f64);
        metrics::gauge!("ratelimit_local_untracked").set(self.local_untracked() as f64);
    }
}
