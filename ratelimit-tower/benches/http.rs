//! The layer over real HTTP: plain axum, axum + `tower_governor` and axum +
//! `RateLimitLayer`, each allowing and refusing, driven by `wrk` over
//! loopback in interleaved rounds; the table gives medians and each
//! variant's throughput as a ratio of plain axum's in the same round.
//!
//! `cargo bench -p ratelimit-tower --bench http` (needs `wrk`:
//! `apt-get install wrk`). Options from the environment: `ROUNDS` (3),
//! `SECS` per run (5), `CONNECTIONS` (64).
//!
//! Every server runs on its own one-worker tokio runtime, keyed by the peer
//! IP with one rule and no other headers: "allowing" has a limit out of
//! reach, "refusing" admits one request per hour, so all but the first
//! answer 429. `wrk` runs with one thread (`-t1`). Ours is the layer as an
//! axum application puts it on its `Router`, with
//! `RateLimitLayer::for_axum` (axum's body type: axum boxes any other body
//! on every response); with `LAYER_BODY` set, the layer itself instead
//! (its `ResponseBody`, boxed by axum).
//!
//! Beside throughput, each run gives the server's CPU time per request
//! (user and system, read from `/proc` for the server's own threads, in
//! ticks of 10 ms): less noisy than throughput on a machine that `wrk`
//! shares, and its difference to plain axum's in the same round is what
//! the layer costs a request, kernel work included.
//!
//! With `SERVE=<variant number>` (0 plain, 1 tower_governor allowing, 2
//! ours allowing, 3 tower_governor refusing, 4 ours refusing) only that
//! server starts, prints its address and serves until killed: for a
//! profile, e.g. `perf record -g -p <pid>` while `wrk -t1 -c64` drives it.
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use ratelimit_tower::RateLimitLayer;
use tokio::net::TcpListener;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::GovernorLayer;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn app() -> Router {
    Router::new().route("/", get(|| async { "hello" }))
}

fn ours(limit: u64, period: &str) -> RateLimitLayer {
    RateLimitLayer::from_json_str(&format!(
        r#"[{{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
             "limit": {limit}, "burst": {limit}, "period": "{period}", "key": ["ip"]}}]"#
    ))
    .expect("valid rules")
}

/// `app()` behind our layer: see the module's docs for `LAYER_BODY`.
fn limited(layer: RateLimitLayer) -> Router {
    match std::env::var_os("LAYER_BODY") {
        Some(_) => app().layer(layer),
        None => app().layer(layer.for_axum()),
    }
}

fn governor(allowing: bool) -> Router {
    let mut builder = GovernorConfigBuilder::default();
    if allowing {
        builder.per_nanosecond(1).burst_size(u32::MAX);
    } else {
        builder.per_second(3600).burst_size(1);
    }
    let config = Arc::new(builder.finish().expect("valid governor config"));
    app().layer(GovernorLayer::new(config))
}

/// A server: its address and its threads' `/proc` stat files.
struct Server {
    addr: SocketAddr,
    threads: Arc<Mutex<Vec<PathBuf>>>,
}

impl Server {
    /// CPU time its threads have used so far, in ticks (user + system).
    fn ticks(&self) -> u64 {
        let threads = self.threads.lock().expect("threads");
        threads.iter().map(|stat| thread_ticks(stat)).sum()
    }
}

/// Records the calling thread's `/proc` stat file in `threads`.
fn record_thread(threads: &Mutex<Vec<PathBuf>>) {
    let task = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let stat = PathBuf::from("/proc").join(task).join("stat");
    threads.lock().expect("threads").push(stat);
}

/// utime + stime of one thread (fields 14 and 15 of its stat file; the
/// name before them, in parentheses, may hold spaces).
fn thread_ticks(stat: &Path) -> u64 {
    let text = std::fs::read_to_string(stat).expect("thread stat");
    let after_name = &text[text.rfind(')').expect("stat: name") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    let field = |i: usize| fields[i].parse::<u64>().expect("stat: a number");
    // Field 3 (the state) is the first after the name.
    field(14 - 3) + field(15 - 3)
}

/// Serves `router` on a thread of its own with a one-worker runtime.
fn serve(router: Router) -> Server {
    let (tx, rx) = std::sync::mpsc::channel();
    let threads = Arc::new(Mutex::new(Vec::new()));
    let (mine, workers) = (threads.clone(), threads.clone());
    std::thread::spawn(move || {
        record_thread(&mine);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(move || record_thread(&workers))
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send");
            let svc = router.into_make_service_with_connect_info::<SocketAddr>();
            let _ = axum::serve(listener, svc).await;
        });
    });
    let addr = rx.recv().expect("server address");
    Server { addr, threads }
}

/// One `wrk` run: (requests per second, p99 in µs, server CPU µs per
/// request).
fn wrk(server: &Server, secs: u64, connections: u64) -> (f64, f64, f64) {
    let (addr, before) = (server.addr, server.ticks());
    let out = Command::new("wrk")
        .args(["-t1", &format!("-c{connections}"), &format!("-d{secs}s")])
        .arg("--latency")
        .arg(format!("http://{addr}/"))
        .output()
        .expect("wrk not found: install it with `apt-get install wrk`");
    let text = String::from_utf8_lossy(&out.stdout);
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Requests/sec in wrk's output:\n{text}"));
    let p99 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("99%"))
        .map(|v| micros(v.trim()))
        .unwrap_or_else(|| panic!("no 99% latency in wrk's output:\n{text}"));
    let requests: f64 = text
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no request count in wrk's output:\n{text}"));
    // A tick is 10 ms (Linux's USER_HZ, 100).
    let cpu = (server.ticks() - before) as f64 * 10_000.0 / requests;
    (rps, p99, cpu)
}

/// `1.29ms` -> 1290.0
fn micros(v: &str) -> f64 {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n,
        "ms" => n * 1_000.0,
        "s" => n * 1_000_000.0,
        _ => f64::NAN,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (rounds, secs, conns) = (env("ROUNDS", 3), env("SECS", 5), env("CONNECTIONS", 64));
    let targets = [
        ("plain axum", serve(app())),
        ("tower_governor allowing", serve(governor(true))),
        ("ours allowing", serve(limited(ours(1_000_000_000, "1s")))),
        ("tower_governor refusing", serve(governor(false))),
        ("ours refusing", serve(limited(ours(1, "1h")))),
    ];
    if let Ok(only) = std::env::var("SERVE") {
        let (name, server) = only
            .parse::<usize>()
            .ok()
            .and_then(|i| targets.get(i))
            .expect("SERVE: a variant number, 0 to 4");
        println!(
            "serving {name} on http://{}/ (pid {})",
            server.addr,
            std::process::id()
        );
        loop {
            std::thread::park();
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut ratio = vec![Vec::new(); targets.len()];
    let mut p99 = vec![Vec::new(); targets.len()];
    let mut cpu = vec![Vec::new(); targets.len()];
    for round in 0..rounds as usize {
        let mut rps = vec![0.0; targets.len()];
        for k in 0..targets.len() {
            let i = (k + round) % targets.len();
            let (r, p, c) = wrk(&targets[i].1, secs, conns);
            rps[i] = r;
            p99[i].push(p);
            cpu[i].push(c);
        }
        for i in 0..targets.len() {
            ratio[i].push(rps[i] / rps[0]);
        }
        let rounded: Vec<u64> = rps.iter().map(|v| v.round() as u64).collect();
        let us: Vec<String> = cpu.iter().map(|c| format!("{:.2}", c[round])).collect();
        println!(
            "round {}: req/s {rounded:?}, server CPU µs / request [{}]",
            round + 1,
            us.join(", ")
        );
    }
    println!("\n| variant | req/s as a ratio of plain axum in the same round (median of {rounds}) | p99 µs (median) | p99 / plain's | server CPU µs / request (median) | over plain's in the same round (median) |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let plain_p99 = median(p99[0].clone());
    for (i, (name, _)) in targets.iter().enumerate() {
        let p = median(p99[i].clone());
        // The machine's speed drifts between rounds: the layer's cost is
        // each round's difference to plain axum's.
        let over: Vec<f64> = cpu[i].iter().zip(&cpu[0]).map(|(c, p)| c - p).collect();
        println!(
            "| {name} | {:.3} | {p:.0} | {:.2} | {:.3} | {:+.3} |",
            median(ratio[i].clone()),
            p / plain_p99,
            median(cpu[i].clone()),
            median(over)
        );
    }
}
