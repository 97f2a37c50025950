//! "Over any time window, the requests admitted are at most the rate times
//! the window, plus burst + 1."

use proptest::prelude::*;

mod support;

use support::*;

/// The admitted times of one client sending `steps` (wait ms, requests) bursts.
fn admitted(policy: &LimitReqPolicy, steps: &[(u64, usize)]) -> Vec<u64> {
    let clock = clock();
    let ip = from("192.0.2.1");
    let mut times = Vec::new();
    for &(wait, n) in steps {
        clock.advance(ms(wait));
        for _ in 0..n {
            let d = policy.check(&ip, clock.now_ms());
            if d.rejected().is_none() {
                times.push(clock.now_ms());
            }
        }
    }
    times
}

/// Checks every window that starts and ends at an admitted request.
fn check_windows(times: &[u64], milli_per_second: u64, burst: u64) -> Result<(), TestCaseError> {
    for i in 0..times.len() {
        for j in i..times.len() {
            let window_ms = u128::from(times[j] - times[i]);
            let count = (j - i + 1) as u128;
            // count <= rate * window + burst + 1, in integers:
            // (count - burst - 1) * 1000 * 1000 <= milli-requests/s * ms.
            let over = count.saturating_sub(u128::from(burst) + 1) * 1_000_000;
            prop_assert!(
                over <= u128::from(milli_per_second) * window_ms,
                "{count} admitted in {window_ms} ms at {milli_per_second} milli-r/s, burst {burst}: {times:?}"
            );
        }
    }
    Ok(())
}

fn steps() -> impl Strategy<Value = Vec<(u64, usize)>> {
    proptest::collection::vec((0u64..1500, 1usize..6), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn admitted_requests_never_exceed_rate_times_window_plus_burst_plus_one(
        rate in 1u32..20,
        per_minute in any::<bool>(),
        burst in 0u32..6,
        mode in 0u8..3,
        steps in steps(),
    ) {
        let unit = if per_minute { "r/m" } else { "r/s" };
        let config = format!("limit_req_zone $client_ip zone=z:1m rate={rate}{unit};");
        let options = match (mode, burst) {
            (_, 0) | (0, _) => String::new(),
            (1, _) => " nodelay".to_owned(),
            _ => format!(" delay={}", burst / 2 + 1),
        };
        let burst_arg = if burst > 0 { format!(" burst={burst}") } else { String::new() };
        let policy = req_policy(&config, &format!("limit_req zone=z{burst_arg}{options};"));
        let milli = policy.zones().next().map(|z| z.rate().milli_per_second()).unwrap_or(0);
        check_windows(&admitted(&policy, &steps), milli, u64::from(burst))?;
    }

    #[test]
    fn two_zones_on_one_request_each_keep_their_own_bound(
        burst_a in 0u32..4,
        burst_b in 0u32..4,
        steps in steps(),
    ) {
        let config = "limit_req_zone $client_ip zone=a:1m rate=3r/s; limit_req_zone $method zone=b:1m rate=2r/s;";
        let level = format!(
            "limit_req zone=a burst={} nodelay; limit_req zone=b burst={};",
            burst_a + 1,
            burst_b + 1
        );
        let policy = req_policy(config, &level);
        let times = admitted(&policy, &steps);
        check_windows(&times, 3000, u64::from(burst_a + 1))?;
        check_windows(&times, 2000, u64::from(burst_b + 1))?;
    }
}
