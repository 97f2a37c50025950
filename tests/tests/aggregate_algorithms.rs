//! Aggregate enforcement: 4 limiter instances, each with its own
//! `ValkeyBackend` (its own connections, as separate pods would have), 64
//! concurrent clients each, share one Valkey. For every algorithm, over
//! several 1 s windows of real time, the fleet admits no more than the
//! limit (not 4 x the limit), and a subject sending well under the limit is
//! never refused; a control shows the check catches per-pod counters.
//!
//!
//! Time: every instance decides with Valkey `TIME`. Valkey runs on this
//! host, so that is the wall clock the tests read (checked at the start of
//! each test). Each admitted request was decided at some millisecond in the
//! span of its call; `ratelimit_tests::support::bounds` checks the promises
//! soundly over those spans (calendar windows: some placement of the
//! decisions in their spans keeps every window at or under the limit;
//! buckets: requests certainly decided within `[a, b]` are at most
//! `burst + (b - a) * limit / period`, plus a slack of 1 for clock
//! rounding).
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratelimit_core::algorithm::distinct;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, Limiter, RequestAttrs};
use ratelimit_testkit::valkey::spawned;
use ratelimit_tests::support::aggregate::*;
use ratelimit_tests::support::bounds::{self, Span};
use ratelimit_tests::support::record::{Log, Recorder, Sample};
use ratelimit_tests::support::valkey::assert_same_clock;
use ratelimit_tests::support::{unique, Rng};
use ratelimit_valkey::ValkeyBackend;

/// Runs 4 instances x 64 clients against one Valkey for `algorithm`, then
/// checks the algorithm's bound for each hot subject and that calm subjects
/// were never refused.
async fn fleet_holds_the_limit(algorithm: &str) {
    let server = spawned();
    assert_same_clock(server.url()).await;
    let json = rule_json(algorithm);
    let rules = RuleSet::from_json(&json).expect("rules");
    let log = Log::new();
    let prefix = unique("agg");
    let mut limiters = Vec::new();
    for i in 0..INSTANCES {
        let backend = ValkeyBackend::builder(server.url())
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("backend");
        limiters.push(log.limiter(rules.clone(), backend, i, INSTANCES as u64));
    }
    let seen: Tally = Arc::default();
    let stop = Instant::now() + RUN;
    let distinct = algorithm == "distinct";
    let mut tasks = tokio::task::JoinSet::new();
    for (i, limiter) in limiters.iter().enumerate() {
        for c in 0..CLIENTS {
            let (limiter, seen) = (limiter.clone(), seen.clone());
            let mut rng = Rng::new((i * CLIENTS + c) as u64 + 1);
            tasks.spawn(async move {
                while Instant::now() < stop {
                    let ip = HOT[rng.below(HOT.len() as u64) as usize];
                    let mut req = RequestAttrs::new(ip.parse().expect("ip"));
                    if distinct {
                        req = req.with_path(format!("/v/{}", rng.next_u64()));
                    }
                    let v = limiter.check(&req).await;
                    tally(&seen, ip, v.outcome);
                    let pause = rng.below(4);
                    if pause > 0 {
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                    } else {
                        tokio::task::yield_now().await;
                    }
                }
            });
        }
        // Calm subjects: each sends LIMIT / 4 per period over the fleet.
        for (k, ip) in CALM.iter().enumerate() {
            let (limiter, seen) = (limiter.clone(), seen.clone());
            let every = PERIOD_MS * 4 * INSTANCES as u64 / LIMIT;
            let mut rng = Rng::new(1000 + (i * 10 + k) as u64);
            tasks.spawn(async move {
                tokio::time::sleep(Duration::from_millis(rng.below(every))).await;
                let mut n = 0u64;
                while Instant::now() < stop {
                    let mut req = RequestAttrs::new(ip.parse().expect("ip"));
                    if distinct {
                        // LIMIT / 2 different values at most.
                        req = req.with_path(format!("/calm/{}", n % (LIMIT / 2)));
                    }
                    n += 1;
                    let v = limiter.check(&req).await;
                    tally(&seen, ip, v.outcome);
                    let jitter = rng.below(every / 5 + 1);
                    tokio::time::sleep(Duration::from_millis(every - every / 10 + jitter)).await;
                }
            });
        }
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("a client task panicked");
    }
    let samples = log.samples();
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let failed = samples.iter().filter(|s| s.failed()).count();
    assert_eq!(failed, 0, "{algorithm}: backend calls failed under load");

    let mut lines = Vec::new();
    for ip in CALM {
        let s = seen.get(ip).copied().unwrap_or_default();
        assert!(
            s.forward >= 10,
            "{algorithm}: calm {ip} sent too little: {s:?}"
        );
        assert_eq!(
            (s.limited, s.other),
            (0, 0),
            "{algorithm}: calm subject {ip}, well under the limit, was refused: {s:?}"
        );
    }
    let mut over = 0;
    for ip in HOT {
        let d = digest_of(&rules, ip);
        let mine: Vec<&Sample> = samples.iter().filter(|s| s.subject == d).collect();
        let s = seen.get(ip).copied().unwrap_or_default();
        let admitted = mine.iter().filter(|s| s.admitted()).count() as u64;
        assert_eq!(
            admitted, s.forward,
            "{algorithm} {ip}: the backend admitted {admitted}, the clients saw {s:?}"
        );
        assert_eq!(s.other, 0, "{algorithm} {ip}: {s:?}");
        assert!(
            s.limited > 0,
            "{algorithm} {ip}: never limited, the load is too light: {s:?}"
        );
        let sp = spans(&mine);
        let per_instance: Vec<usize> = (0..INSTANCES)
            .map(|i| {
                mine.iter()
                    .filter(|s| s.instance == i && s.admitted())
                    .count()
            })
            .collect();
        let line = match algorithm {
            "fixed_window" | "sliding_window" => {
                let r = bounds::calendar_windows(&sp, PERIOD_MS, LIMIT);
                let flips = if algorithm == "sliding_window" {
                    bounds::sliding_flips(&sp, PERIOD_MS, LIMIT)
                } else {
                    Ok(0)
                };
                match (r, flips) {
                    (Ok(r), Ok(f)) => {
                        // Demand far above the limit: each full window fills.
                        assert!(
                            admitted >= LIMIT * (RUN.as_secs() - 1) * 8 / 10,
                            "{algorithm} {ip}: only {admitted} admitted in {} windows",
                            r.windows
                        );
                        format!(
                            "{ip}: {admitted} admitted of {} over {} windows (limit {LIMIT}/window; \
                             busiest window certainly {}; {} straddling; {f} flip checks), per instance {per_instance:?}",
                            s.forward + s.limited,
                            r.windows,
                            r.busiest_certain,
                            r.straddling
                        )
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        over += 1;
                        format!("{ip}: OVER-ADMISSION: {e}")
                    }
                }
            }
            "token_bucket" | "leaky_bucket" => {
                match bounds::bucket(&sp, LIMIT, PERIOD_MS, BURST, 1) {
                    Ok(r) => {
                        assert!(
                            admitted >= (BURST + LIMIT * (RUN.as_secs() - 1)) * 8 / 10,
                            "{algorithm} {ip}: only {admitted} admitted"
                        );
                        format!(
                        "{ip}: {admitted} admitted of {} ({} intervals checked, tightest margin {}), per instance {per_instance:?}",
                        s.forward + s.limited,
                        r.intervals,
                        r.tightest
                    )
                    }
                    Err(e) => {
                        over += 1;
                        format!("{ip}: OVER-ADMISSION: {e}")
                    }
                }
            }
            _ => {
                let adm: Vec<(Span, u64, u16)> = mine
                    .iter()
                    .filter_map(|s| match s.result {
                        Ok(d) if d.allowed => Some((
                            (s.sent_ms, s.done_ms),
                            d.reset_ms,
                            s.bit.unwrap_or(u16::MAX),
                        )),
                        _ => None,
                    })
                    .collect();
                let max_bits = distinct::max_bits(LIMIT) as usize;
                match bounds::distinct_periods(&adm, PERIOD_MS, max_bits) {
                    Ok(r) => format!(
                        "{ip}: {admitted} admitted of {} over {} periods (at most {} different \
                         values in one, limit {LIMIT}, {max_bits} bits), per instance {per_instance:?}",
                        s.forward + s.limited,
                        r.periods,
                        r.most_bits
                    ),
                    Err(e) => {
                        over += 1;
                        format!("{ip}: OVER-ADMISSION: {e}")
                    }
                }
            }
        };
        lines.push(line);
    }
    eprintln!(
        "aggregate {algorithm}: {INSTANCES} instances x {CLIENTS} clients, {} checks in {:?}\n  {}",
        samples.len(),
        RUN,
        lines.join("\n  ")
    );
    assert_eq!(
        over,
        0,
        "{algorithm}: over-admission:\n{}",
        lines.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_window_fleet_admits_at_most_the_limit() {
    fleet_holds_the_limit("fixed_window").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sliding_window_fleet_admits_at_most_the_limit() {
    fleet_holds_the_limit("sliding_window").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_bucket_fleet_admits_at_most_the_limit() {
    fleet_holds_the_limit("token_bucket").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaky_bucket_fleet_admits_at_most_the_limit() {
    fleet_holds_the_limit("leaky_bucket").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_fleet_admits_at_most_the_limit() {
    fleet_holds_the_limit("distinct").await;
}

/// The control: the same load on 4 instances that each count in their own
/// memory (the per-pod anti-pattern) must be caught by the same check, so a
/// pass above means something.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_per_pod_memory_counters_are_caught() {
    let rules = RuleSet::from_json(&rule_json("fixed_window")).expect("rules");
    let log = Log::new();
    let limiters: Vec<Limiter> = (0..INSTANCES)
        .map(|i| {
            Limiter::builder(rules.clone())
                // Subjects are checked below with the public test key.
                .hash_key(HashKey::DEFAULT)
                .backend(Recorder::new(
                    ratelimit_core::backend::MemoryBackend::with_capacity(1000),
                    i,
                    log.clone(),
                ))
                .build()
        })
        .collect();
    let stop = Instant::now() + Duration::from_millis(2_500);
    let mut tasks = tokio::task::JoinSet::new();
    for limiter in &limiters {
        for _ in 0..8 {
            let limiter = limiter.clone();
            tasks.spawn(async move {
                let req = RequestAttrs::new(HOT[0].parse().expect("ip"));
                while Instant::now() < stop {
                    limiter.check(&req).await;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("task");
    }
    let samples = log.samples();
    let all: Vec<&Sample> = samples.iter().collect();
    let err = bounds::calendar_windows(&spans(&all), PERIOD_MS, LIMIT)
        .expect_err("4 separate counters admit about 4 x the limit per window");
    eprintln!("aggregate control (per-pod memory counters): caught: {err}");
}
