//! nginx's leaky-bucket arithmetic, as pure functions over integers.
//!
//! Units follow `ngx_http_limit_req_module.c`: an excess in 1/1000
//! requests, a rate in 1/1000 requests per second, times in milliseconds.
//! A request adds 1000 to the excess; the bucket drains `rate * ms / 1000`
//! (truncated) between two requests; a request is refused when the excess
//! it would leave is over `burst * 1000`.

/// The time since `last` as nginx counts it: a clock that went back by up
/// to a minute counts as no time, one that went back further as 1 ms.
pub(crate) const fn elapsed_ms(now: u64, last: u64) -> u64 {
    if now >= last {
        now - last
    } else if last - now > 60_000 {
        1
    } else {
        0
    }
}

/// What is left of `excess` after draining at `rate` for `ms`, floored at 0.
pub(crate) fn drained(excess: u64, rate: u64, ms: u64) -> u64 {
    let drain = u128::from(rate) * u128::from(ms) / 1000;
    saturate(u128::from(excess).saturating_sub(drain))
}

/// The excess a request leaves: `max(0, excess - rate * ms / 1000 + 1000)`.
///
/// Note that the drain is subtracted before the 1000 is added, so a
/// bucket that drained more than one request's worth below 0 forgets it.
pub(crate) fn excess_after(excess: u64, rate: u64, ms: u64) -> u64 {
    let drain = u128::from(rate) * u128::from(ms) / 1000;
    saturate((u128::from(excess) + 1000).saturating_sub(drain))
}

/// How long a request with `excess` waits when the first `delay` (in 1/1000
/// requests) pass at once: `(excess - delay) * 1000 / rate` ms, or 0.
pub(crate) fn delay_ms(excess: u64, delay: u64, rate: u64) -> u64 {
    if excess <= delay || rate == 0 {
        return 0;
    }
    saturate(u128::from(excess - delay) * 1000 / u128::from(rate))
}

/// The first time at which a state with `excess`, last charged at `last`,
/// has drained to 0 at `rate` (the smallest `t` with `drained(..) == 0`).
pub(crate) fn idle_at(excess: u64, rate: u64, last: u64) -> u64 {
    if excess == 0 {
        return last;
    }
    let rate = u128::from(rate.max(1));
    let wait = (u128::from(excess) * 1000).div_ceil(rate);
    last.saturating_add(saturate(wait))
}

fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_request_after_a_partial_drain() {
        // 1r/s: 1.5 s after an excess of 2 requests, a request leaves 1.5.
        assert_eq!(excess_after(2000, 1000, 1500), 1500);
        // With delay=1, that request waits (1500 - 1000) * 1000 / 1000 ms.
        assert_eq!(delay_ms(1500, 1000, 1000), 500);
    }

    #[test]
    fn a_clock_that_went_back_is_clamped_as_nginx_does() {
        assert_eq!(elapsed_ms(10_000, 9_000), 1_000);
        assert_eq!(elapsed_ms(9_000, 10_000), 0);
        assert_eq!(elapsed_ms(0, 60_000), 0);
        assert_eq!(elapsed_ms(0, 60_001), 1);
    }

    #[test]
    fn the_drain_is_truncated_before_the_request_is_added() {
        // 1r/m = 16 milli-requests per second; 999 ms drains 15.
        assert_eq!(excess_after(1000, 16, 999), 1985);
        // A bucket that drained far below zero forgets the credit.
        assert_eq!(excess_after(0, 1000, 10_000), 0);
        assert_eq!(excess_after(500, 1000, 1000), 500);
    }

    #[test]
    fn huge_products_saturate_instead_of_overflowing() {
        assert_eq!(excess_after(u64::MAX, 1, 0), u64::MAX);
        assert_eq!(drained(5, u64::MAX, u64::MAX), 0);
        assert_eq!(delay_ms(u64::MAX, 0, 1), u64::MAX);
    }

    #[test]
    fn nodelay_is_an_infinite_delay_threshold() {
        assert_eq!(delay_ms(5000, u64::MAX, 1000), 0);
        assert_eq!(delay_ms(5000, 0, 1000), 5000);
        assert_eq!(delay_ms(5000, 2000, 10_000), 300);
    }

    proptest! {
        #[test]
        fn idle_at_is_the_first_time_the_excess_is_drained(
            excess in 0u64..10_000_000, rate in 1u64..10_000_000, last in 0u64..1_000_000_000
        ) {
            let t = idle_at(excess, rate, last);
            prop_assert_eq!(drained(excess, rate, elapsed_ms(t, last)), 0);
            if t > last {
                prop_assert!(drained(excess, rate, elapsed_ms(t - 1, last)) > 0);
            }
        }
    }
}
