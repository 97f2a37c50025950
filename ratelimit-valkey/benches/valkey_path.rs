//! The Valkey path end to end (issue 7): a `Limiter` on the `ValkeyBackend`
//! under 64 concurrent requests of 2 rules each over 100,000 keys, and the
//! server CPU of each algorithm's script.
//!
//! ```text
//! cargo bench -p ratelimit-valkey --bench valkey_path -- [options]
//!
//!   --mode all|limiter|cpu|redis-benchmark-args   (default all)
//!   --rules sw+tb|sw+sw  the limiter phase's second rule (default sw+tb)
//!   --secs S          measured seconds of the limiter phase (10)
//!   --warmup S        warm-up seconds before each measurement (3)
//!   --cpu-secs S      measured seconds of each per-algorithm CPU phase (4)
//!   --concurrency N   concurrent requests (64)
//!   --keys N          client IPs, chosen uniformly (100000)
//!   --threads N       tokio runtime: 1 = current-thread (default), N > 1 = N workers
//!   --connections N   multiplexed connections per node (the backend's default:
//!                     one per core, 2 to 4)
//!   --flush           FLUSHALL before each phase (implied on a server of its own)
//! ```
//!
//! With `VALKEY_URL` set it runs against that server (as
//! `benches/valkey_peers.sh` does, so that the peers share it); otherwise it
//! spawns a `valkey-server` of its own (see `scripts/install-valkey.sh`).
//!
//! Each measurement first asks once for every key (the steady state: every
//! subject has its key), then warms up, then measures.
//!
//! - `limiter`: rule `site` (sliding window keyed on the IP) and rule `api`
//!   (keyed on IP and the `x-user` header: a token bucket with `--rules
//!   sw+tb`, a sliding window with `sw+sw`), every request
//!   matching both, limits high enough that every request is admitted
//!   (`fail_mode: closed`, so a backend error would show as a 503 and is
//!   counted). Reports requests/s, decisions/s (= 2 x requests/s) and the
//!   latency of `Limiter::check` (p50, p99).
//! - `cpu`: one rule per algorithm, alone, under the same load; after the
//!   warm-up `CONFIG RESETSTAT`, then `INFO commandstats`: the server's
//!   `usec_per_call` of `EVALSHA`, i.e. the script's CPU per decision.
//! - `redis-benchmark-args`: loads the sliding-window script and the batch
//!   script and prints, for `redis-benchmark`, their SHAs, the keys
//!   (subject replaced by `0000__rand_int__`) and ARGV exactly as the
//!   backend sends them: the `site` rule's check alone (`RB`, one decision
//!   per call), and a `sw+sw` request's two checks in one batch call
//!   (`RB2`, two decisions per call).
//!
//! Lines starting with `RESULT` / `CPU` / `RB` / `RB2` are for the driver script.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratelimit_core::algorithm::Algorithm;
use ratelimit_core::backend::Check;
use ratelimit_core::rules::{Rule, RuleSet};
use ratelimit_core::{HashKey, Limiter, Outcome, RequestAttrs};
use ratelimit_testkit::valkey::{info_of as info, load_script as load, ValkeyServer};
use ratelimit_valkey::{batch_script_source, key_of, script_source, ValkeyBackend};
use redis::aio::MultiplexedConnection;

const PREFIX: &str = "rl:";
const SITE_LIMIT: u64 = 1_000_000_000;
const SITE_PERIOD_MS: u64 = 60_000;

#[derive(Debug, Clone)]
struct Opts {
    mode: String,
    rules: String,
    secs: f64,
    warmup: f64,
    cpu_secs: f64,
    concurrency: usize,
    keys: u32,
    threads: usize,
    /// `None`: the backend's default.
    connections: Option<usize>,
    flush: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        mode: "all".into(),
        rules: "sw+tb".into(),
        secs: 10.0,
        warmup: 3.0,
        cpu_secs: 4.0,
        concurrency: 64,
        keys: 100_000,
        threads: 1,
        connections: None,
        flush: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--mode" => o.mode = val(),
            "--rules" => o.rules = val(),
            "--secs" => o.secs = val().parse().expect("--secs"),
            "--warmup" => o.warmup = val().parse().expect("--warmup"),
            "--cpu-secs" => o.cpu_secs = val().parse().expect("--cpu-secs"),
            "--concurrency" => o.concurrency = val().parse().expect("--concurrency"),
            "--keys" => o.keys = val().parse().expect("--keys"),
            "--threads" => o.threads = val().parse().expect("--threads"),
            "--connections" => o.connections = Some(val().parse().expect("--connections")),
            "--flush" => o.flush = true,
            // `cargo bench` passes `--bench`; ignore what is not ours.
            _ => {}
        }
    }
    o
}

/// The two rules of the limiter phase: `site`, a sliding window keyed on
/// the IP, and `api` keyed on the IP and the `x-user` header, a token bucket
/// (`sw+tb`) or a second sliding window (`sw+sw`, the script of the
/// redis-benchmark ceiling).
fn two_rules(rules: &str) -> RuleSet {
    let api = match rules {
        "sw+sw" => {
            format!(r#""algorithm": "sliding_window", "limit": {SITE_LIMIT}, "period": "1m""#)
        }
        // A slow refill and a deep bucket: the state outlives the ~3 s
        // between two requests of one key, so every call reads and writes it.
        _ => r#""algorithm": "token_bucket", "limit": 10, "burst": 1000000, "period": "1m""#
            .to_string(),
    };
    RuleSet::from_json(&format!(
        r#"[{{"id": "site", "expression": "true", "algorithm": "sliding_window",
              "limit": {SITE_LIMIT}, "period": "1m", "key": ["ip"], "fail_mode": "closed"}},
            {{"id": "api", "expression": "true", {api},
              "key": ["ip", "header:x-user"], "fail_mode": "closed"}}]"#
    ))
    .expect("valid rules")
}

/// One rule of `algorithm`, admitting everything this load sends.
fn one_rule(algorithm: Algorithm) -> RuleSet {
    let numbers = match algorithm {
        Algorithm::FixedWindow | Algorithm::SlidingWindow => {
            format!(r#""limit": {SITE_LIMIT}, "period": "1m""#)
        }
        // A slow refill and a deep bucket: the state outlives the ~3 s
        // between two requests of one key, so every call reads and writes it.
        Algorithm::TokenBucket | Algorithm::LeakyBucket => {
            r#""limit": 10, "burst": 1000000, "period": "1m""#.to_string()
        }
        _ => r#""distinct_of": "path", "limit": 1000, "period": "1m""#.to_string(),
    };
    RuleSet::from_json(&format!(
        r#"[{{"id": "one", "expression": "true", "algorithm": "{}", {numbers},
              "key": ["ip"], "fail_mode": "closed"}}]"#,
        algorithm.as_str()
    ))
    .expect("valid rule")
}

fn ip(i: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | i))
}

fn requests(keys: u32) -> Arc<Vec<RequestAttrs>> {
    Arc::new(
        (0..keys)
            .map(|i| {
                RequestAttrs::new(ip(i))
                    .with_method("GET")
                    .with_path(format!("/p{}", i % 8))
                    .with_header("x-user", format!("u{i}"))
            })
            .collect(),
    )
}

/// xorshift64*: uniform enough to pick keys, and free.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32 % n
    }
}

/// CPU seconds (user + system) of this process.
fn process_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime), counted from the state (field 3).
    (ticks(11) + ticks(12)) / 100.0
}

/// A plain `name:value` line of INFO.
fn info_value(info: &str, name: &str) -> Option<f64> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// A field of a `prefix` line of INFO: `cmdstat_evalsha:calls=1,usec=2,...`.
fn info_field(info: &str, prefix: &str, field: &str) -> Option<f64> {
    let line = info.lines().find(|l| l.starts_with(prefix))?;
    let rest = line.strip_prefix(prefix)?;
    rest.split([',', ':'])
        .find_map(|kv| kv.strip_prefix(field)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

async fn server_cpu(conn: &mut MultiplexedConnection) -> f64 {
    let i = info(conn, "cpu").await;
    info_value(&i, "used_cpu_sys").unwrap_or(0.0) + info_value(&i, "used_cpu_user").unwrap_or(0.0)
}

#[derive(Debug, Default)]
struct Run {
    requests: u64,
    refused: u64,
    latencies_ns: Vec<u64>,
    elapsed: f64,
    client_cpu: f64,
    server_cpu: f64,
}

impl Run {
    fn pct(&mut self, p: f64) -> f64 {
        if self.latencies_ns.is_empty() {
            return 0.0;
        }
        self.latencies_ns.sort_unstable();
        let i = ((self.latencies_ns.len() as f64 * p).ceil() as usize)
            .clamp(1, self.latencies_ns.len())
            - 1;
        self.latencies_ns[i] as f64 / 1000.0
    }
}

/// Asks once for every key, `concurrency` at a time, so that the
/// measurement sees the steady state (every subject has a key) rather than
/// key creation.
async fn prefill(limiter: &Limiter, reqs: &Arc<Vec<RequestAttrs>>, o: &Opts) {
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..o.concurrency {
        let (limiter, reqs, step) = (limiter.clone(), reqs.clone(), o.concurrency);
        tasks.spawn(async move {
            for req in reqs.iter().skip(t).step_by(step) {
                limiter.check(req).await;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("task");
    }
}

/// Asks once for every key, then runs `concurrency` tasks calling
/// `limiter.check` on keys chosen uniformly for `warmup` then `secs`
/// seconds; measures the second part.
async fn drive(
    limiter: &Limiter,
    reqs: &Arc<Vec<RequestAttrs>>,
    o: &Opts,
    secs: f64,
    conn: &mut MultiplexedConnection,
    reset_stats: bool,
) -> Run {
    prefill(limiter, reqs, o).await;
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(o.warmup);
    let measure_to = measure_from + Duration::from_secs_f64(secs);
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..o.concurrency {
        let (limiter, reqs) = (limiter.clone(), reqs.clone());
        let n = reqs.len() as u32;
        tasks.spawn(async move {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((t as u64 + 1) << 17));
            let mut lat = Vec::with_capacity(1 << 16);
            let (mut done, mut refused) = (0u64, 0u64);
            loop {
                let req = &reqs[rng.below(n) as usize];
                let t0 = Instant::now();
                if t0 >= measure_to {
                    break;
                }
                let v = limiter.check(req).await;
                let t1 = Instant::now();
                // Lets the runtime's other tasks in even if checks never wait.
                tokio::task::consume_budget().await;
                if t0 >= measure_from && t1 <= measure_to {
                    done += 1;
                    lat.push((t1 - t0).as_nanos() as u64);
                    if v.outcome != Outcome::Forward {
                        if refused == 0 && t == 0 {
                            eprintln!("not forwarded: {v:?}");
                        }
                        refused += 1;
                    }
                }
            }
            (done, refused, lat)
        });
    }
    tokio::time::sleep_until(measure_from.into()).await;
    if reset_stats {
        let _: () = redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query_async(conn)
            .await
            .expect("RESETSTAT");
    }
    let (cpu0, scpu0) = (process_cpu(), server_cpu(conn).await);
    tokio::time::sleep_until(measure_to.into()).await;
    let (cpu1, scpu1) = (process_cpu(), server_cpu(conn).await);
    let mut run = Run {
        elapsed: secs,
        client_cpu: (cpu1 - cpu0) / secs,
        server_cpu: (scpu1 - scpu0) / secs,
        ..Run::default()
    };
    while let Some(r) = tasks.join_next().await {
        let (done, refused, lat) = r.expect("task");
        run.requests += done;
        run.refused += refused;
        run.latencies_ns.extend(lat);
    }
    run
}

async fn flush(conn: &mut MultiplexedConnection, o: &Opts) {
    if o.flush {
        let _: () = redis::cmd("FLUSHALL")
            .arg("SYNC")
            .query_async(conn)
            .await
            .expect("FLUSHALL");
    }
}

async fn limiter_of(url: &str, rules: RuleSet, connections: Option<usize>) -> Limiter {
    // A deadline well above the latencies seen here: this measures
    // throughput, and on a loaded 2-core machine a stall can pass the
    // default 50 ms (a timed-out check would be a 503 and is counted).
    let mut builder = ValkeyBackend::builder(url)
        .key_prefix(PREFIX)
        .deadline(Duration::from_secs(1));
    if let Some(n) = connections {
        builder = builder.connections(n);
    }
    let backend = builder.build().await.expect("backend");
    Limiter::builder(rules).backend(backend).build()
}

async fn limiter_phase(url: &str, o: &Opts, conn: &mut MultiplexedConnection) {
    flush(conn, o).await;
    let limiter = limiter_of(url, two_rules(&o.rules), o.connections).await;
    let reqs = requests(o.keys);
    let mut run = drive(&limiter, &reqs, o, o.secs, conn, false).await;
    let rps = run.requests as f64 / run.elapsed;
    let (p50, p99) = (run.pct(0.50), run.pct(0.99));
    println!(
        "ours ({}): {} concurrent x 2 rules over {} keys, {}-thread runtime: {rps:.0} requests/s = \
         {:.0} decisions/s, p50 {p50:.0} us, p99 {p99:.0} us, {} not forwarded; \
         client CPU {:.2} cores, server CPU {:.2} cores",
        o.rules,
        o.concurrency,
        o.keys,
        o.threads,
        rps * 2.0,
        run.refused,
        run.client_cpu,
        run.server_cpu
    );
    println!(
        "RESULT name=ours-{} requests_per_s={rps:.0} decisions_per_s={:.0} p50_us={p50:.0} \
         p99_us={p99:.0} errors={} client_cpu={:.2} server_cpu={:.2}",
        o.rules,
        rps * 2.0,
        run.refused,
        run.client_cpu,
        run.server_cpu
    );
    if run.refused > 0 {
        eprintln!("warning: {} requests not forwarded", run.refused);
    }
}

async fn cpu_phase(url: &str, o: &Opts, conn: &mut MultiplexedConnection) {
    let reqs = requests(o.keys);
    for algorithm in [
        Algorithm::FixedWindow,
        Algorithm::SlidingWindow,
        Algorithm::TokenBucket,
        Algorithm::LeakyBucket,
        Algorithm::Distinct,
    ] {
        flush(conn, o).await;
        let limiter = limiter_of(url, one_rule(algorithm), o.connections).await;
        let mut run = drive(&limiter, &reqs, o, o.cpu_secs, conn, true).await;
        let stats = info(conn, "commandstats").await;
        let usec = info_field(&stats, "cmdstat_evalsha:", "usec_per_call").unwrap_or(f64::NAN);
        let calls = info_field(&stats, "cmdstat_evalsha:", "calls").unwrap_or(0.0);
        let rps = run.requests as f64 / run.elapsed;
        println!(
            "{:<15} EVALSHA {usec:>5.2} usec_per_call ({calls:.0} calls); 1 rule: {rps:.0} decisions/s, \
             p50 {:.0} us, p99 {:.0} us, server CPU {:.2} cores",
            algorithm.as_str(),
            run.pct(0.5),
            run.pct(0.99),
            run.server_cpu
        );
        println!(
            "CPU algo={} usec_per_call={usec:.2} calls={calls:.0} decisions_per_s={rps:.0} errors={}",
            algorithm.as_str(),
            run.refused
        );
        if run.refused > 0 {
            eprintln!("warning: {} requests not forwarded", run.refused);
        }
    }
}

/// The check of rule `id` of the `sw+sw` pair for subject 0, as the
/// limiter builds it.
fn sw_check(id: &str) -> Check {
    let set = two_rules("sw+sw");
    let rule: Arc<Rule> = set.get(id).cloned().expect("rule");
    let ns: Arc<str> = Check::namespace_of(&rule).into();
    let subject = HashKey::DEFAULT.digest(b"0");
    Check::new(rule.clone(), ns, subject, rule.quota(1), None, None)
}

/// The key of `check` with its subject replaced by `0000__rand_int__`
/// (redis-benchmark's random 12 digits), the length kept.
fn key_template(check: &Check) -> String {
    let key = key_of(PREFIX, check);
    // `rl:{` + 16 characters of subject + `}` + namespace: keep the length.
    let open = key.find('{').expect("hash tag");
    let close = key.find('}').expect("hash tag");
    let template = format!("{}{{0000__rand_int__}}{}", &key[..open], &key[close + 1..]);
    assert_eq!(template.len() - "__rand_int__".len() + 12, key.len());
    template
}

/// Prints the two ceilings' commands for redis-benchmark: `RB`, the
/// sliding-window script of one check (the `site` rule); `RB2`, the batch
/// script with both checks of a `sw+sw` request (`site` and `api`, two
/// subjects), as the backend sends them with Valkey time (ARGV: per check
/// its head (2: a sliding-window count of cost 1 without a penalty),
/// limit, period; no time after them: the script reads Valkey TIME).
async fn redis_benchmark_args(conn: &mut MultiplexedConnection) {
    let sha = load(
        conn,
        script_source(Algorithm::SlidingWindow).expect("a script"),
    )
    .await;
    let site = key_template(&sw_check("site"));
    println!("RB sha={sha} key={site} limit={SITE_LIMIT} period_ms={SITE_PERIOD_MS} cost=1");
    let batch = load(conn, batch_script_source()).await;
    let api = key_template(&sw_check("api"));
    assert_ne!(site, api);
    println!(
        "RB2 sha={batch} key1={site} key2={api} limit={SITE_LIMIT} period_ms={SITE_PERIOD_MS} cost=1"
    );
}

fn main() {
    let o = opts();
    let server = ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"));
    let mut o2 = o.clone();
    if server.port().is_some() {
        o2.flush = true;
    }
    let o = o2;
    let rt = if o.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(o.threads)
            .enable_all()
            .build()
    }
    .expect("runtime");
    rt.block_on(async {
        let url = server.url().to_string();
        let mut conn = redis::Client::open(url.as_str())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        match o.mode.as_str() {
            "limiter" => limiter_phase(&url, &o, &mut conn).await,
            "cpu" => cpu_phase(&url, &o, &mut conn).await,
            "redis-benchmark-args" => redis_benchmark_args(&mut conn).await,
            _ => {
                limiter_phase(&url, &o, &mut conn).await;
                cpu_phase(&url, &o, &mut conn).await;
            }
        }
    });
}
