//! Aggregate enforcement: 4 limiter instances, each with its own
//! `ValkeyBackend` (its own connections, as separate pods would have), 64
//! concurrent clients each, share one Valkey. For every algorithm, over
//! several 1 s windows of real time, the fleet admits no more than the
//! limit (not 4 x the limit), and a subject sending well under the limit is
//! never refused. Then the same through the tower layer over TCP: two axum
//! servers with their own limiters, hyper clients hitting both.
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

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use ratelimit_core::algorithm::distinct;
use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::control::StaticFleet;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, KeyDigest, Limiter, Outcome, RequestAttrs};
use ratelimit_testkit::valkey::spawned;
use ratelimit_tests::support::bounds::{self, Span};
use ratelimit_tests::support::http::{serve_axum, KeepAlive};
use ratelimit_tests::support::record::{Log, Recorder, Sample};
use ratelimit_tests::support::valkey::assert_same_clock;
use ratelimit_tests::support::{unique, wall_ms, Rng};
use ratelimit_tower::{RateLimitLayer, TrustedProxies};
use ratelimit_valkey::ValkeyBackend;

const INSTANCES: usize = 4;
const CLIENTS: usize = 64;
const PERIOD_MS: u64 = 1000;
const LIMIT: u64 = 50;
const BURST: u64 = 20;
/// How long each algorithm is driven: 5 windows of 1 s.
const RUN: Duration = Duration::from_millis(5_000);
/// A generous deadline: this test is about counting, not faults; a call
/// that failed would be refused (fail_mode closed) and is reported.
const DEADLINE: Duration = Duration::from_secs(2);

const HOT: [&str; 4] = [
    "198.51.100.1",
    "198.51.100.2",
    "198.51.100.3",
    "198.51.100.4",
];
const CALM: [&str; 2] = ["203.0.113.1", "203.0.113.2"];

fn rule_json(algorithm: &str) -> String {
    let extra = match algorithm {
        "token_bucket" | "leaky_bucket" => format!(r#", "burst": {BURST}"#),
        "distinct" => r#", "distinct_of": "path""#.to_string(),
        _ => String::new(),
    };
    format!(
        r#"[{{"id": "agg", "expression": "true", "algorithm": "{algorithm}",
             "limit": {LIMIT}, "period": "1s", "key": ["ip"],
             "fail_mode": "closed"{extra}}}]"#
    )
}

/// What the clients saw, per subject IP.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    forward: u64,
    limited: u64,
    other: u64,
}

type Tally = Arc<Mutex<HashMap<String, Seen>>>;

fn tally(t: &Tally, ip: &str, outcome: Outcome) {
    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
    let s = t.entry(ip.to_string()).or_default();
    match outcome {
        Outcome::Forward => s.forward += 1,
        Outcome::Limited => s.limited += 1,
        _ => s.other += 1,
    }
}

fn digest_of(rules: &RuleSet, ip: &str) -> KeyDigest {
    let req = RequestAttrs::new(ip.parse().expect("ip"));
    match subject(&rules.rules()[0], &req, &HashKey::DEFAULT, false) {
        KeyOutcome::Subject(d) => d,
        other => panic!("no subject for {ip}: {other:?}"),
    }
}

fn spans(samples: &[&Sample]) -> Vec<Span> {
    samples
        .iter()
        .filter(|s| s.admitted())
        .map(|s| (s.sent_ms, s.done_ms))
        .collect()
}

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
        limiters.push(
            Limiter::builder(rules.clone())
                // Subjects are checked below with the public test key.
                .hash_key(HashKey::DEFAULT)
                .backend(Recorder::new(backend, i, log.clone()))
                .fleet_size(StaticFleet(INSTANCES as u64))
                .build(),
        );
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

/// Two axum servers (separate limiters and backends, trusting one proxy
/// hop) on loopback; 64 hyper keep-alive clients, each with a connection to
/// both servers. Two rules: a fixed window on `/fw` and a token bucket on
/// `/tb`. 200s per window never exceed the limit over both servers, and the
/// calm subject is never refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_tower_layer_two_servers_share_the_limit() {
    const TOWER_LIMIT: u64 = 40;
    const TOWER_BURST: u64 = 10;
    const HOT_IP: &str = "198.51.100.77";
    const CALM_IP: &str = "203.0.113.77";
    let server = spawned();
    assert_same_clock(server.url()).await;
    let json = format!(
        r#"[
        {{"id": "fw", "expression": "http.request.uri.path eq \"/fw\"",
          "algorithm": "fixed_window", "limit": {TOWER_LIMIT}, "period": "1s",
          "key": ["ip"], "fail_mode": "closed"}},
        {{"id": "tb", "expression": "http.request.uri.path eq \"/tb\"",
          "algorithm": "token_bucket", "limit": {TOWER_LIMIT}, "burst": {TOWER_BURST},
          "period": "1s", "key": ["ip"], "fail_mode": "closed"}}
    ]"#
    );
    let rules = RuleSet::from_json(&json).expect("rules");
    let log = Log::new();
    let prefix = unique("tower");
    let mut addrs = Vec::new();
    for i in 0..2 {
        let backend = ValkeyBackend::builder(server.url())
            .key_prefix(&prefix)
            .deadline(DEADLINE)
            .build()
            .await
            .expect("backend");
        let limiter = Limiter::builder(rules.clone())
            // Subjects are checked below with the public test key.
            .hash_key(HashKey::DEFAULT)
            .backend(Recorder::new(backend, i, log.clone()))
            .fleet_size(StaticFleet(2))
            .build();
        let layer = RateLimitLayer::new(limiter).trusted_proxies(TrustedProxies::hops(1));
        let app = Router::new()
            .route("/fw", get(|| async { "ok" }))
            .route("/tb", get(|| async { "ok" }))
            .layer(layer);
        addrs.push(serve_axum(app).await);
    }
    // (path, ip) -> (status, sent, done) of every answer.
    type Answers = Arc<Mutex<Vec<(&'static str, &'static str, u16, u64, u64)>>>;
    let answers: Answers = Arc::default();
    let stop = Instant::now() + Duration::from_secs(5);
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..64u64 {
        let (answers, addrs) = (answers.clone(), addrs.clone());
        tasks.spawn(async move {
            let mut conns = Vec::new();
            for a in &addrs {
                conns.push(KeepAlive::connect(*a).await.expect("connect"));
            }
            let mut rng = Rng::new(c + 77);
            while Instant::now() < stop {
                let path = if rng.below(2) == 0 { "/fw" } else { "/tb" };
                let conn = &mut conns[rng.below(2) as usize];
                let sent = wall_ms();
                let (status, retry) = conn
                    .get(path, &[("x-forwarded-for", HOT_IP)])
                    .await
                    .expect("an answer");
                let done = wall_ms();
                if status == 429 {
                    assert!(retry.is_some(), "429 without Retry-After");
                }
                answers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((path, HOT_IP, status, sent, done));
                tokio::time::sleep(Duration::from_millis(rng.below(3))).await;
            }
        });
    }
    for k in 0..2u64 {
        let (answers, addrs) = (answers.clone(), addrs.clone());
        tasks.spawn(async move {
            let mut conn = KeepAlive::connect(addrs[k as usize])
                .await
                .expect("connect");
            // Both calm clients together: TOWER_LIMIT / 4 per second per path.
            let every = 1000 * 2 * 4 / TOWER_LIMIT / 2;
            let mut n = 0u64;
            while Instant::now() < stop {
                let path = if n.is_multiple_of(2) { "/fw" } else { "/tb" };
                n += 1;
                let sent = wall_ms();
                let (status, _) = conn
                    .get(path, &[("x-forwarded-for", CALM_IP)])
                    .await
                    .expect("an answer");
                answers.lock().unwrap_or_else(|e| e.into_inner()).push((
                    path,
                    CALM_IP,
                    status,
                    sent,
                    wall_ms(),
                ));
                tokio::time::sleep(Duration::from_millis(every)).await;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("a client task panicked");
    }
    let answers = answers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let samples = log.samples();
    assert_eq!(samples.iter().filter(|s| s.failed()).count(), 0);
    let count = |path: &str, ip: &str, status: u16| {
        answers
            .iter()
            .filter(|a| a.0 == path && a.1 == ip && a.2 == status)
            .count()
    };
    for path in ["/fw", "/tb"] {
        let calm_ok = count(path, CALM_IP, 200);
        let calm_total = answers
            .iter()
            .filter(|a| a.0 == path && a.1 == CALM_IP)
            .count();
        assert!(calm_total >= 10, "calm {path}: only {calm_total} requests");
        assert_eq!(calm_ok, calm_total, "calm subject refused on {path}");
        let others = answers
            .iter()
            .filter(|a| a.0 == path && ![200, 429].contains(&a.2))
            .count();
        assert_eq!(others, 0, "{path}: answers other than 200 / 429");
    }
    let hot_ip: IpAddr = HOT_IP.parse().expect("ip");
    let mut lines = Vec::new();
    for (path, rule) in [("/fw", "fw"), ("/tb", "tb")] {
        let ok: Vec<Span> = answers
            .iter()
            .filter(|a| a.0 == path && a.1 == HOT_IP && a.2 == 200)
            .map(|a| (a.3, a.4))
            .collect();
        let limited = count(path, HOT_IP, 429);
        // The backend's own count agrees with what the clients saw.
        let r = rules.get(rule).expect("rule");
        let d = match subject(r, &RequestAttrs::new(hot_ip), &HashKey::DEFAULT, false) {
            KeyOutcome::Subject(d) => d,
            other => panic!("{other:?}"),
        };
        let admitted = samples
            .iter()
            .filter(|s| &*s.rule == rule && s.subject == d && s.admitted())
            .count();
        assert_eq!(admitted, ok.len(), "{path}: backend and clients disagree");
        assert!(limited > 0, "{path}: never limited");
        let line = if rule == "fw" {
            let rep = bounds::calendar_windows(&ok, PERIOD_MS, TOWER_LIMIT)
                .unwrap_or_else(|e| panic!("{path}: over-admission through the layer: {e}"));
            format!(
                "{path}: {} x 200, {limited} x 429 over {} windows (limit {TOWER_LIMIT}, busiest certainly {})",
                ok.len(),
                rep.windows,
                rep.busiest_certain
            )
        } else {
            let rep = bounds::bucket(&ok, TOWER_LIMIT, PERIOD_MS, TOWER_BURST, 1)
                .unwrap_or_else(|e| panic!("{path}: over-admission through the layer: {e}"));
            format!(
                "{path}: {} x 200, {limited} x 429 (token bucket {TOWER_LIMIT}/s burst {TOWER_BURST}, tightest margin {})",
                ok.len(),
                rep.tightest
            )
        };
        lines.push(line);
    }
    eprintln!(
        "aggregate tower: 2 servers x 64 keep-alive clients, {} answers\n  {}",
        answers.len(),
        lines.join("\n  ")
    );
}
