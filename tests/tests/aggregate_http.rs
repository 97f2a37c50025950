//! Aggregate enforcement through the tower layer over TCP: two axum
//! servers with their own limiters and backends on one Valkey, hyper
//! clients hitting both, never admit more than the limit between them.
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

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, RequestAttrs};
use ratelimit_testkit::valkey::spawned;
use ratelimit_tests::support::aggregate::*;
use ratelimit_tests::support::bounds::{self, Span};
use ratelimit_tests::support::http::{serve_axum, KeepAlive};
use ratelimit_tests::support::record::Log;
use ratelimit_tests::support::valkey::assert_same_clock;
use ratelimit_tests::support::{unique, wall_ms, Rng};
use ratelimit_tower::{RateLimitLayer, TrustedProxies};
use ratelimit_valkey::ValkeyBackend;

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
        let limiter = log.limiter(rules.clone(), backend, i, 2);
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
