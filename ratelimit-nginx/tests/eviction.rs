//! "When a zone has no free state, an idle state is evicted; if every state
//! is in use, the request is refused": a zone too small for its clients
//! decides every request it does not refuse as `zone_exhausted` exactly as
//! a zone with room for all of them, and refuses one only when none of its
//! states is idle. Which idle state goes is left to core's table (nginx
//! takes the least recently used): an idle state decides its key's next
//! request as a fresh one would, so the choice shows in no decision.

use proptest::prelude::*;

mod support;

use support::*;

const CLIENTS: usize = 6;
/// 384 bytes: three limit_req states.
const SMALL: usize = 3;

fn policy(size: &str, rate: u32, burst: u32) -> LimitReqPolicy {
    let config = format!("limit_req_zone $client_ip zone=z:{size} rate={rate}r/s;");
    let burst = match burst {
        0 => String::new(),
        n => format!(" burst={n} nodelay"),
    };
    req_policy(&config, &format!("limit_req zone=z{burst};"))
}

fn ip(n: usize) -> String {
    format!("192.0.2.{}", n + 1)
}

/// Whether the state of a client last charged at `last` with `excess`
/// left decides its next request at `now` as a fresh state would.
fn idle(excess: u64, last: u64, now: u64, milli_per_second: u64) -> bool {
    u128::from(milli_per_second) * u128::from(now - last) / 1000 >= u128::from(excess + 1000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_small_zone_decides_as_a_large_one_and_refuses_only_when_nothing_is_idle(
        rate in 1u32..6,
        burst in 0u32..3,
        timeline in proptest::collection::vec((0u64..700, 0..CLIENTS), 1..120),
    ) {
        let small = policy("384", rate, burst);
        let large = policy("1m", rate, burst);
        let small_zone = small.zones().next().cloned().expect("zone");
        prop_assert_eq!(small_zone.capacity() as usize, SMALL);
        let large_zone = large.zones().next().cloned().expect("zone");
        let milli = large_zone.rate().milli_per_second();
        let clock = clock();
        let mut last_charged: [Option<u64>; CLIENTS] = [None; CLIENTS];
        for (wait, client) in timeline {
            clock.advance(ms(wait));
            let now = clock.now_ms();
            let req = from(&ip(client));
            let got = small.check(&req, now);
            if got.rejected().is_some_and(|r| r.zone_exhausted()) {
                prop_assert_eq!(large_zone.stored_excess(ip(client).as_bytes()).is_some_and(
                    |e| last_charged[client].is_some_and(|t| !idle(e, t, now, milli))), false,
                    "refused a client whose own state the zone would keep");
                let busy = (0..CLIENTS).filter(|&c| c != client).filter(|&c| {
                    let excess = large_zone.stored_excess(ip(c).as_bytes());
                    matches!((excess, last_charged[c]), (Some(e), Some(t)) if !idle(e, t, now, milli))
                }).count();
                prop_assert!(busy >= SMALL, "refused as zone_exhausted with {busy} busy states");
                continue;
            }
            // A request the small zone refuses as exhausted is charged
            // nowhere: the large zone sees only the others.
            let want = large.check(&req, now);
            prop_assert_eq!(&got, &want, "client {} at +{} ms", client, now - T0);
            if want.rejected().is_none() {
                last_charged[client] = Some(now);
            }
        }
        prop_assert!(small_zone.len() as usize <= SMALL);
    }
}
