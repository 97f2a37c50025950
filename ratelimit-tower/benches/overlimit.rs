//! A flood from one client over its limit, through the layer: refused
//! requests per second on Valkey with and without the over-limit cache,
//! against the in-memory backend's refuse path (cache off), and the
//! backend calls the flood cost.
//!
//! `cargo bench -p ratelimit-tower --bench overlimit`. Options from the
//! environment: `ROUNDS` (5), `SECS` per run (2), `CONCURRENCY` (64).
//! With `VALKEY_URL` set it runs against that server, else it spawns a
//! `valkey-server` of its own (`VALKEY_SERVER`, or see
//! `scripts/install-valkey.sh`).
//!
//! Every variant runs in-process on a one-thread tokio runtime: the layer
//! in front of a handler answering 200, `CONCURRENCY` tasks sending
//! requests from one IP under one rule (a fixed window of 1 an hour, so all
//! but the first answer 429); rounds interleave the variants; the table
//! gives medians and each variant's refusals/s as a ratio of the memory
//! backend's.
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Request, Response};
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, BoxFuture, CheckResult};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{ClientIp, Limiter};
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_tower::RateLimitLayer;
use ratelimit_valkey::ValkeyBackend;
use tower::{Layer, ServiceExt};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Another backend, counting the batches it gets.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn Backend>,
    calls: AtomicUsize,
}

impl Backend for Counting {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.check(batch)
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.hash_key()
    }
}

const RULE: &str = r#"[{"id": "flood", "expression": "true", "algorithm": "fixed_window",
    "limit": 1, "period": "1h", "key": ["ip"], "ratelimit_headers": true}]"#;

/// One run: refused requests per second, and backend calls.
async fn run(backend: Arc<dyn Backend>, cache: bool, secs: f64, tasks: usize) -> (f64, usize) {
    let counting = Arc::new(Counting {
        inner: backend,
        calls: AtomicUsize::new(0),
    });
    let limiter = Limiter::builder(RuleSet::from_json(RULE).expect("rule"))
        .backend_arc(counting.clone())
        .overlimit_cache_capacity(if cache { 100_000 } else { 0 })
        .build();
    let svc =
        RateLimitLayer::new(limiter).layer(tower::service_fn(|_req: Request<String>| async {
            Ok::<_, Infallible>(Response::new(String::from("ok")))
        }));
    // A fresh IP per run: the flood starts from an admission.
    static RUN: AtomicU64 = AtomicU64::new(1);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let ip = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | (n as u32 & 0xff_ffff)));
    let refused = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..tasks {
        let (svc, refused) = (svc.clone(), refused.clone());
        set.spawn(async move {
            while Instant::now() < deadline {
                let mut req = Request::new(String::new());
                req.extensions_mut().insert(ClientIp(ip));
                let res = svc.clone().oneshot(req).await.expect("infallible");
                if res.status() == 429 {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    while set.join_next().await.is_some() {}
    let rate = refused.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    (rate, counting.calls.load(Ordering::Relaxed))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds = env("ROUNDS", 5) as usize;
    let secs = env("SECS", 2) as f64;
    let tasks = env("CONCURRENCY", 64) as usize;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = ValkeyServer::start().expect("a valkey-server");
    let valkey: Arc<dyn Backend> = rt.block_on(async {
        Arc::new(
            ValkeyBackend::builder(server.url())
                .key_prefix(format!("ob{}:", std::process::id()))
                .build()
                .await
                .expect("valkey backend"),
        )
    });
    let memory: Arc<dyn Backend> = Arc::new(MemoryBackend::default());
    let variants: [(&str, &Arc<dyn Backend>, bool); 4] = [
        ("memory, cache off (the refuse path)", &memory, false),
        ("memory, over-limit cache", &memory, true),
        ("Valkey, cache off", &valkey, false),
        ("Valkey, over-limit cache", &valkey, true),
    ];
    let mut rates = vec![Vec::new(); variants.len()];
    let mut calls = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for (i, (name, backend, cache)) in variants.iter().enumerate() {
            let (rate, c) = rt.block_on(run((*backend).clone(), *cache, secs, tasks));
            println!("round {round} {name}: {rate:.0} refused/s, {c} backend calls");
            rates[i].push(rate);
            calls[i].push(c as f64);
        }
    }
    let base = median(&mut rates[0].clone());
    println!();
    println!(
        "| variant | refused/s (median) | / memory refuse path | backend calls per run (median) |"
    );
    println!("| --- | ---: | ---: | ---: |");
    for (i, (name, _, _)) in variants.iter().enumerate() {
        let r = median(&mut rates[i]);
        let c = median(&mut calls[i]);
        println!("| {name} | {r:.0} | {:.2} | {c:.0} |", r / base);
    }
}
