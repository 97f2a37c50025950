//! The over-limit cache: refusals answered locally until the earliest
//! admission, proven against the backend alone.

use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::limiter::RuleReport;
use ratelimit_core::{Clock, Limiter, ManualClock, Outcome, RequestAttrs};

use super::{req, rules, Backends, Probe, T0};

/// Every algorithm the cache serves, one rule each (the `/all` path
/// matches them all), plus a penalty rule and a log rule; `big` raises the
/// numbers, as a publish that changes the rules without changing their
/// namespaces (same id, algorithm and period).
fn timeline_rules(big: bool) -> String {
    let (fw, sw, tb, lb) = if big { (6, 5, 5, 6) } else { (4, 4, 3, 3) };
    let r = |id: &str, algo: &str, extra: &str| {
        format!(
            r#"{{"id": "{id}", "expression": "http.request.uri.path eq \"/{id}\" or http.request.uri.path eq \"/all\"",
            "algorithm": "{algo}", "period": "10s", "key": ["ip"]{extra}}}"#
        )
    };
    let set = [
        r("fw", "fixed_window", &format!(r#", "limit": {fw}"#)),
        r("sw", "sliding_window", &format!(r#", "limit": {sw}"#)),
        r(
            "tb",
            "token_bucket",
            &format!(r#", "limit": 4, "burst": {tb}"#),
        ),
        r(
            "lb",
            "leaky_bucket",
            &format!(r#", "limit": 3, "burst": {lb}"#),
        ),
        r("pen", "fixed_window", r#", "limit": 3, "penalty": "15s""#),
        r("log", "fixed_window", r#", "limit": 2, "action": "log""#),
    ];
    format!("[{}]", set.join(","))
}

/// xorshift64*: a reproducible stream of random numbers per seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Three limiters on one shared state (the handles of `pair`, the first one
/// used twice), on `clock`.
fn fleet(pair: &[Arc<dyn Backend>; 2], clock: &ManualClock, cache: usize) -> Vec<Limiter> {
    [&pair[0], &pair[1], &pair[0]]
        .into_iter()
        .map(|b| {
            Limiter::builder(rules(&timeline_rules(false)))
                .clock(clock.clone())
                .backend_arc(b.clone())
                .overlimit_cache_capacity(cache)
                .reports(true)
                .build()
        })
        .collect()
}

/// Random timelines of requests (random instance, subject, path, cost and
/// time step; now and then a publish that raises or lowers the limits)
/// through two fleets of three instances, each fleet on a shared state of
/// its own: one with the over-limit cache, one without. Each answer of the
/// cached fleet must be the answer of the backend alone at that time
/// (the uncached fleet's): the same outcome, and a Retry-After no later.
/// Since refusals charge nothing, the two shared states stay the same
/// throughout, so every step compares like with like.
pub async fn overlimit_cache_answers_as_the_backend_alone(b: &impl Backends) {
    let mut saved = (0, 0);
    for seed in 1..=12u64 {
        let pair = b.pair().await;
        let probes = pair
            .clone()
            .map(|h| Arc::new(Probe::new(h)) as Arc<dyn Backend>);
        let probed = [probes[0].clone(), probes[1].clone()];
        let clock = ManualClock::new(T0 + seed * 1_337);
        let cached = fleet(&probed, &clock, 1_000);
        let alone = fleet(&b.pair().await, &clock, 0);
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut big = false;
        let paths = ["/fw", "/sw", "/tb", "/lb", "/pen", "/log", "/all"];
        for step in 0..400 {
            let step_ms = match rng.below(10) {
                0..=2 => 0,
                3..=6 => rng.below(300),
                7..=8 => rng.below(3_000),
                _ => rng.below(12_000),
            };
            clock.set_ms(clock.now_ms() + step_ms);
            if rng.below(60) == 0 {
                big = !big;
                for l in cached.iter().chain(&alone) {
                    l.publish(rules(&timeline_rules(big)));
                }
            }
            let i = rng.below(3) as usize;
            let ip = ["192.0.2.1", "192.0.2.2"][rng.below(2) as usize];
            let path = paths[rng.below(paths.len() as u64) as usize];
            let mut r: RequestAttrs = req(ip, path);
            let cost = 1 + rng.below(4);
            if cost > 1 {
                r = r.with_cost(cost);
            }
            let got = cached[i].check(&r).await;
            let want = alone[i].check(&r).await;
            let at = format!("seed {seed} step {step}: {ip} {path} cost {cost} on {i}");
            same_reports(&at, &got, &want, [&cached[i], &alone[i]]);
            assert_eq!(got.outcome, want.outcome, "{at}");
            assert_eq!(got.would_limit, want.would_limit, "{at}");
            assert!(got.retry_after_ms <= want.retry_after_ms, "{at}");
            if got.outcome == Outcome::Limited {
                assert!(got.retry_after_ms > 0, "{at}");
            }
            saved.1 += got.reports.len();
            let local = |r: &&RuleReport| r.from_penalty_cache && &*r.rule != "pen";
            saved.0 += got.reports.iter().filter(local).count();
        }
    }
    assert!(
        saved.0 > 150,
        "the cache answered {} of {}",
        saved.0,
        saved.1
    );
}

/// Each rule's report in `v`, by rule id: (rule, allowed).
fn reports_of(v: &ratelimit_core::Verdict) -> Vec<(Arc<str>, bool)> {
    let mut r: Vec<_> = v
        .reports
        .iter()
        .map(|r| (r.rule.clone(), r.allowed))
        .collect();
    r.sort();
    r
}

/// The cached fleet's verdict `got` reports the same rules, allowed alike,
/// as the backend alone's `want`; on a mismatch, says how many times each
/// rule failed open so far on each fleet's instance (a rule that fails
/// open reports nothing).
fn same_reports(
    at: &str,
    got: &ratelimit_core::Verdict,
    want: &ratelimit_core::Verdict,
    on: [&Limiter; 2],
) {
    if reports_of(got) == reports_of(want) {
        return;
    }
    let failed = |l: &Limiter| {
        let ids = ["fw", "sw", "tb", "lb", "pen", "log"];
        let open = |id| l.rule_stats(id).map_or(0, |s| s.fail_open());
        ids.map(|id| format!("{id} {}", open(id))).join(", ")
    };
    panic!(
        "{at}: reports {:?}, alone {:?}; rules failed open so far: cached [{}], alone [{}]",
        reports_of(got),
        reports_of(want),
        failed(on[0]),
        failed(on[1]),
    );
}

/// A flood from one subject through two instances: each asks the backend
/// once per earliest-admission interval, plus once per admission; a
/// smaller cost than the refused one still asks; the cached refusal carries
/// the Retry-After to the earliest admission and remaining 0.
pub async fn a_flood_asks_the_backend_once_per_earliest_admission(b: &impl Backends) {
    let [one, two] = b.pair().await;
    let (p1, p2) = (Arc::new(Probe::new(one)), Arc::new(Probe::new(two)));
    let clock = ManualClock::new(T0);
    let json = r#"[{"id": "fw", "expression": "http.request.uri.path eq \"/fw\"",
        "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"],
        "ratelimit_headers": true},
        {"id": "tb", "expression": "http.request.uri.path eq \"/tb\"",
        "algorithm": "token_bucket", "limit": 10, "period": "10s", "burst": 1, "key": ["ip"]}]"#;
    let make = |p: &Arc<Probe>| {
        Limiter::builder(rules(json))
            .clock(clock.clone())
            .backend_arc(p.clone())
            .reports(true)
            .build()
    };
    let (a, b) = (make(&p1), make(&p2));
    let fw = req("192.0.2.1", "/fw");
    let mut admitted = 0;
    for n in 0..200u64 {
        clock.set_ms(T0 + n * 100);
        for l in [&a, &b] {
            let v = l.check(&fw.clone().with_cost(2)).await;
            admitted += u64::from(v.is_forward());
            if !v.is_forward() {
                let left = 60_000 - n * 100;
                assert_eq!(v.retry_after_ms, left, "to the window end");
                // Cached or not, the backend's answer: 1 left, a cost of 2
                // refused (the window's count does not move while refused).
                assert_eq!(v.headers[0].remaining, 1, "as the backend said");
            }
        }
    }
    assert_eq!(admitted, 1, "cost 2 of 3 a minute");
    assert_eq!((p1.calls(), p2.calls()), (2, 1), "one refusal call each");
    // A smaller cost than the refused one asks, and fits.
    assert!(b.check(&fw).await.is_forward());
    assert_eq!(p2.calls(), 2);
    // The next window: the refusals have ended.
    clock.set_ms(T0 + 60_000);
    assert!(a.check(&fw.clone().with_cost(2)).await.is_forward());
    assert_eq!(p1.calls(), 3);

    // Token bucket: one token a second; a flood every 50 ms for 10 s.
    let (c1, c2) = (p1.calls(), p2.calls());
    let tb = req("192.0.2.9", "/tb");
    let mut admitted = 0;
    for n in 0..200u64 {
        clock.set_ms(T0 + 120_000 + n * 50);
        for l in [&a, &b] {
            admitted += u64::from(l.check(&tb).await.is_forward());
        }
    }
    let refusal_calls = (p1.calls() - c1) + (p2.calls() - c2) - admitted as usize;
    assert_eq!(admitted, 10);
    assert!(
        refusal_calls <= 2 * 10,
        "{refusal_calls} refusal calls: at most one per second per instance"
    );
}

/// A publish that raises the limit applies on the next request: the
/// namespace (id, algorithm, period) is unchanged, so the counts carry
/// over, but the cached refusal belongs to the old rule.
pub async fn a_publish_drops_the_cached_refusals_of_its_rules(b: &impl Backends) {
    let probe = Arc::new(Probe::new(b.fresh().await));
    let clock = ManualClock::new(T0);
    let json = |limit: u32| {
        format!(
            r#"[{{"id": "fw", "expression": "true", "algorithm": "fixed_window",
            "limit": {limit}, "period": "1m", "key": ["ip"]}}]"#
        )
    };
    let l = Limiter::builder(rules(&json(1)))
        .clock(clock.clone())
        .backend_arc(probe.clone())
        .reports(true)
        .build();
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    assert!(!l.check(&r).await.is_forward());
    let v = l.check(&r).await;
    assert!(v.reports[0].from_penalty_cache, "answered locally");
    assert_eq!(probe.calls(), 2);
    l.publish(rules(&json(3)));
    assert!(l.check(&r).await.is_forward(), "the raised limit applies");
    assert_eq!(probe.calls(), 3);
    // And an administrative reset lifts a cached refusal here.
    assert!(l.check(&r).await.is_forward());
    assert!(!l.check(&r).await.is_forward());
    l.reset("fw", &r).await.expect("reset");
    assert!(l.check(&r).await.is_forward());
}
