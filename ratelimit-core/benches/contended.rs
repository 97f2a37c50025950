//! Whole decisions from one thread and from two at once, on one limiter
//! and one rule: what the threads' shared writes cost (the rule's
//! counters, the store's shards), beside governor's keyed limiter driven
//! the same way in the same run.
//!
//! Each thread decides `per` allowed requests (a token bucket out of
//! reach) for its own 1,024 client addresses in turn, through
//! `Limiter::check` on the in-memory backend; governor's threads call
//! `check_key` for the same addresses. Neither reads a real clock: ours
//! is a `ManualClock`, governor's a `FakeRelativeClock`, both standing
//! still (governor's default would read quanta's on every check). A
//! round times every thread; the table gives, per variant, the median
//! over rounds of the ns a decision takes with one thread and with two,
//! and their ratio: 1.00 when the threads share nothing that slows them,
//! more when they do. The machine has 2 cores, so two threads are as many
//! as it can run at once; on a shared machine read the ratios against
//! governor's in the same run.
//!
//! `cargo bench -p ratelimit-core --bench contended -- [rounds=15] [per=200000]`
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use governor::clock::FakeRelativeClock;
use governor::middleware::NoOpMiddleware;
use governor::{Quota, RateLimiter};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

/// governor's middleware for its still clock's instants.
type StillMiddleware = NoOpMiddleware<<FakeRelativeClock as governor::clock::Clock>::Instant>;

const T0: u64 = 1_767_225_600_000;
const RULES: &str = r#"[{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
    "limit": 1000000000, "burst": 1000000000, "period": "1s", "key": ["ip"]}]"#;

/// The value of `name=` among the arguments.
fn arg(name: &str, default: usize) -> usize {
    std::env::args()
        .find_map(|a| a.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
        .unwrap_or(default)
}

/// Thread `t`'s client addresses.
fn addresses(t: u8) -> Vec<IpAddr> {
    (0..1024u16)
        .map(|i| IpAddr::from([10, t, (i >> 8) as u8, i as u8]))
        .collect()
}

/// Runs `work(t)` on `threads` threads started together: the ns per call
/// of the slowest thread, each making `per` calls.
fn timed(threads: u8, per: usize, work: impl Fn(u8, usize) + Sync) -> f64 {
    let start = Barrier::new(usize::from(threads));
    let slowest = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, work) = (&start, &work);
                s.spawn(move || {
                    start.wait();
                    let begun = Instant::now();
                    work(t, per);
                    begun.elapsed()
                })
            })
            .collect();
        let times = handles.into_iter().map(|h| h.join().expect("thread"));
        times.max().expect("a thread")
    });
    slowest.as_nanos() as f64 / per as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds = arg("rounds", 15);
    let per = arg("per", 200_000);
    let limiter = Limiter::builder(RuleSet::from_json(RULES).expect("rules"))
        .clock(ManualClock::new(T0))
        .build();
    let requests: Vec<Vec<RequestAttrs>> = (0..2)
        .map(|t| addresses(t).into_iter().map(RequestAttrs::new).collect())
        .collect();
    let ours = |t: u8, per: usize| {
        let mine = &requests[usize::from(t)];
        for i in 0..per {
            let v = limiter.check(&mine[i % mine.len()]).into_ready();
            assert!(black_box(v).is_ok_and(|v| v.is_forward()));
        }
    };
    let quota = Quota::per_second(NonZeroU32::MAX).allow_burst(NonZeroU32::MAX);
    // A clock that stands still on both sides (ours is a `ManualClock`):
    // governor's default reads quanta's on every check.
    let governor = Arc::new(
        RateLimiter::<IpAddr, _, _, StillMiddleware>::dashmap_with_clock(
            quota,
            FakeRelativeClock::default(),
        ),
    );
    let keys: Vec<Vec<IpAddr>> = (0..2).map(addresses).collect();
    let theirs = |t: u8, per: usize| {
        let mine = &keys[usize::from(t)];
        for i in 0..per {
            assert!(black_box(governor.check_key(&mine[i % mine.len()])).is_ok());
        }
    };
    // [variant][threads - 1]: ns per decision, one entry a round.
    let mut times = vec![vec![Vec::new(), Vec::new()]; 2];
    for _ in 0..rounds {
        for threads in [1u8, 2] {
            let i = usize::from(threads - 1);
            times[0][i].push(timed(threads, per, ours));
            times[1][i].push(timed(threads, per, theirs));
        }
    }
    println!(
        "| variant | ns a decision, 1 thread | 2 threads | 2 / 1 (median of {rounds} rounds) |"
    );
    println!("| --- | ---: | ---: | ---: |");
    for (name, t) in ["ratelimit-core", "governor check_key"].iter().zip(times) {
        let ratios: Vec<f64> = t[1].iter().zip(&t[0]).map(|(two, one)| two / one).collect();
        let (one, two) = (median(t[0].clone()), median(t[1].clone()));
        println!("| {name} | {one:.1} | {two:.1} | {:.2} |", median(ratios));
    }
}
