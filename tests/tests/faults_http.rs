//! Valkey down behind the tower layer over HTTP: answers by fail mode,
//! within the bound, and 200 again after recovery.
//!
//! In every case: each request is answered within the deadline (50 ms) plus
//! a margin (150 ms, for this small shared machine); `fail_mode: open`
//! passes, `closed` answers 503 with `Retry-After: 1`, `local` admits
//! `limit / fleet size` per instance; the breaker opens and then lets one
//! probe through per second (calls stop reaching Valkey); after recovery
//! the count is shared across instances again; no call is sent twice (the
//! server's `INFO commandstats` against the checks the instances sent);
//! nothing panics. The fleet and these checks are
//! `ratelimit_tests::support::{faults, fault_answers, fault_calls}`.
//!
//! The fault tests take turns (a lock): their latency bounds must not
//! depend on another test's load.
#![allow(clippy::print_stderr)]

use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use ratelimit_testkit::valkey::{spawned, IsolatedProxy, ProxyMode};
use ratelimit_tests::support::faults::*;
use ratelimit_tests::support::http::{serve_axum, KeepAlive};
use ratelimit_tower::RateLimitLayer;

/// Through the tower layer over HTTP, Valkey down: `open` answers 200,
/// `closed` 503 with `Retry-After: 1`, `local` 200 five times (10 / 2) then
/// 429; each within the bound; after recovery `closed` is 200 again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_layer_answers_by_fail_mode_over_http() {
    let _turn = SERIAL.lock().await;
    let what = "tower";
    let server = spawned();
    let port = server.port().expect("spawned");
    let proxy = IsolatedProxy::start(format!("127.0.0.1:{port}"));
    let f = fleet(&proxy.url(), 1, 0).await;
    let app = Router::new()
        .route("/open", get(|| async { "ok" }))
        .route("/closed", get(|| async { "ok" }))
        .route("/local", get(|| async { "ok" }))
        .layer(RateLimitLayer::new(f.limiters[0].clone()));
    let addr = serve_axum(app).await;
    let mut c = Timed {
        conn: KeepAlive::connect(addr).await.expect("connect"),
        took: Vec::new(),
    };
    assert_eq!(c.get("/closed").await.0, 200);
    proxy.set_mode(ProxyMode::Down);
    let mut seen = Vec::new();
    for _ in 0..10 {
        seen.push(("/open", c.get("/open").await));
        seen.push(("/closed", c.get("/closed").await));
    }
    let mut local = Vec::new();
    for _ in 0..7 {
        local.push(c.get("/local").await);
    }
    for (path, (status, retry)) in &seen {
        match *path {
            "/open" => assert_eq!(*status, 200, "{what}: open"),
            _ => assert_eq!(
                (*status, retry.as_deref()),
                (503, Some("1")),
                "{what}: closed"
            ),
        }
    }
    let statuses: Vec<u16> = local.iter().map(|r| r.0).collect();
    assert_eq!(
        statuses,
        vec![200, 200, 200, 200, 200, 429, 429],
        "{what}: local at 10 / 2"
    );
    assert!(local[5].1.is_some(), "{what}: 429 without Retry-After");
    proxy.set_mode(ProxyMode::Pass);
    let t_pass = Instant::now();
    loop {
        if c.get("/closed").await.0 == 200 {
            break;
        }
        assert!(
            t_pass.elapsed() < Duration::from_secs(5),
            "{what}: no recovery"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let slowest = c.took.iter().copied().max().unwrap_or_default();
    assert!(
        slowest <= Duration::from_millis(BOUND_MS),
        "{what}: an HTTP answer took {slowest:?}"
    );
    eprintln!(
        "fault {what}: Valkey down through the layer: open 200, closed 503 Retry-After 1, local \
         200 x 5 then 429; {} HTTP answers, slowest {slowest:?}; recovered {:?} after Pass",
        c.took.len(),
        t_pass.elapsed()
    );
}

/// A keep-alive HTTP connection that times every answer.
struct Timed {
    conn: KeepAlive,
    took: Vec<Duration>,
}

impl Timed {
    async fn get(&mut self, path: &str) -> (u16, Option<String>) {
        let t = Instant::now();
        let r = self.conn.get(path, &[]).await.expect("an answer");
        self.took.push(t.elapsed());
        r
    }
}
