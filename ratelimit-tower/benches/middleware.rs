//! Middleware overhead: an axum hello-world behind `RateLimitLayer`
//! (in-memory) against the same app behind `tower_governor`, and bare,
//! driven over loopback by a load generator in the same run.
//!
//! Both limiters key on the peer IP and admit everything (the limit is out
//! of reach), so the figures are the cost of the check. The server and the
//! load generator each get one runtime thread; the targets take turns, 5
//! rounds of 2 s, and the table shows medians.
//!
//! `cargo bench -p ratelimit-tower --bench middleware`
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use ratelimit_tower::RateLimitLayer;
use tokio::net::{TcpListener, TcpStream};
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::GovernorLayer;

const CONNECTIONS: usize = 32;
const ROUNDS: usize = 5;
const ROUND: Duration = Duration::from_secs(2);

fn app() -> Router {
    Router::new().route("/", get(|| async { "hello" }))
}

async fn serve(router: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let svc = router.into_make_service_with_connect_info::<SocketAddr>();
        let _ = axum::serve(listener, svc).await;
    });
    addr
}

fn servers(rt: &tokio::runtime::Runtime) -> Vec<(&'static str, SocketAddr)> {
    rt.block_on(async {
        let ours = RateLimitLayer::from_json_str(
            r#"[{"id": "per-ip", "expression": "true", "algorithm": "leaky_bucket",
                 "limit": 1000000000, "burst": 1000000000, "period": "1s", "key": ["ip"]}]"#,
        )
        .expect("valid rules");
        let gov = Arc::new(
            GovernorConfigBuilder::default()
                .per_nanosecond(1)
                .burst_size(u32::MAX)
                .finish()
                .expect("valid governor config"),
        );
        vec![
            ("bare axum", serve(app()).await),
            ("RateLimitLayer", serve(app().layer(ours)).await),
            (
                "tower_governor",
                serve(app().layer(GovernorLayer::new(gov))).await,
            ),
        ]
    })
}

/// One connection sending requests back to back until `until`.
async fn client(addr: SocketAddr, until: Instant) -> Vec<u32> {
    let mut lat = Vec::with_capacity(50_000);
    let Ok(stream) = TcpStream::connect(addr).await else {
        return lat;
    };
    let io = hyper_util::rt::TokioIo::new(stream);
    let Ok((mut send, conn)) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(io).await
    else {
        return lat;
    };
    tokio::spawn(conn);
    while Instant::now() < until {
        let req = http::Request::get("/")
            .header("host", "bench")
            .body(Empty::new())
            .expect("request");
        let t = Instant::now();
        let Ok(res) = send.send_request(req).await else {
            break;
        };
        let ok = res.status().is_success();
        let _ = res.into_body().collect().await;
        if ok {
            lat.push(t.elapsed().as_micros() as u32);
        }
    }
    lat
}

fn round(rt: &tokio::runtime::Runtime, addr: SocketAddr) -> (f64, u32, u32) {
    rt.block_on(async {
        let until = Instant::now() + ROUND;
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|_| tokio::spawn(client(addr, until)))
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap_or_default());
        }
        all.sort_unstable();
        let pct = |p: f64| {
            all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        (all.len() as f64 / ROUND.as_secs_f64(), pct(0.50), pct(0.99))
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let load = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let targets = servers(&server);
    let mut results: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = vec![Default::default(); targets.len()];
    for r in 0..ROUNDS {
        for k in 0..targets.len() {
            let i = (k + r) % targets.len();
            let (rps, p50, p99) = round(&load, targets[i].1);
            results[i].0.push(rps);
            results[i].1.push(p50 as f64);
            results[i].2.push(p99 as f64);
        }
    }
    let gov = 2;
    let (gov_rps, gov_p99) = (
        median(results[gov].0.clone()),
        median(results[gov].2.clone()),
    );
    println!("| target | req/s (median of {ROUNDS}) | p50 µs | p99 µs | req/s vs tower_governor | p99 vs tower_governor |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (i, (name, _)) in targets.iter().enumerate() {
        let (rps, p50, p99) = (
            median(results[i].0.clone()),
            median(results[i].1.clone()),
            median(results[i].2.clone()),
        );
        println!(
            "| {name} | {rps:.0} | {p50:.0} | {p99:.0} | {:.2} | {:.2} |",
            rps / gov_rps,
            p99 / gov_p99
        );
    }
}
