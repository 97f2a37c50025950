//! What following the control costs the request path under a flood of
//! notices (issue 39, "Also"): three instances (a `Limiter` on the Valkey
//! backend, following the control) serve requests while someone sends
//! 3,000 `PUBLISH` every 300 ms, to the control's channel (followed) or to
//! a channel no instance follows (unfollowed: the machine's own cost of
//! the traffic). The figure is the ratio of the requests' p99 latency,
//! followed / unfollowed, in the same run; the issue's goal is 1.25 at
//! most (it measured 1.9 to 2.3 before the followers spaced their reads).
//!
//! ```text
//! cargo bench -p ratelimit-valkey --bench notice_flood -- [--secs S] [--rounds N] [--concurrency N]
//! ```
//!
//! Each round runs the three phases (quiet, unfollowed flood, followed
//! flood) for `--secs` (3) each, in an order rotated every round; lines starting with `RESULT` are the
//! figures (with the process's CPU time per request: the instances', the
//! followers' and the flooder's), `RATIO` the ratios of the median p99s
//! over all rounds (on a
//! shared machine, take several rounds: one round's p99 moves with the
//! neighbours' load).
#![allow(clippy::print_stdout)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, RequestAttrs};
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::control::{FollowConfig, Follower, ValkeyControl};
use ratelimit_valkey::ValkeyBackend;

const PREFIX: &str = "rl:";
const RULES: &str = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
    "limit": 1000000000, "period": "1m", "key": ["ip"], "fail_mode": "closed"}]"#;

struct Opts {
    secs: f64,
    rounds: usize,
    concurrency: usize,
}

fn opts() -> Opts {
    let mut o = Opts {
        secs: 3.0,
        rounds: 2,
        concurrency: 8,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--secs" => o.secs = val().parse().expect("--secs"),
            "--rounds" => o.rounds = val().parse().expect("--rounds"),
            "--concurrency" => o.concurrency = val().parse().expect("--concurrency"),
            // `cargo bench` passes `--bench`; ignore what is not ours.
            _ => {}
        }
    }
    o
}

/// Sends 3,000 `PUBLISH` to `channel` every 300 ms until `stop`, from a
/// thread and runtime of its own (the same for both floods).
fn flood(url: String, channel: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let client = redis::Client::open(url.as_str()).expect("url");
            let mut conn = client
                .get_multiplexed_async_connection()
                .await
                .expect("connect");
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut pipe = redis::pipe();
                for i in 0..3_000u64 {
                    pipe.cmd("PUBLISH").arg(&channel).arg(sent + i).ignore();
                }
                let () = pipe.query_async(&mut conn).await.expect("publish");
                sent += 3_000;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            sent
        })
    })
}

/// `concurrency` tasks checking requests over `limiters` for `secs`: each
/// answered check's latency, sorted, and the checks Valkey did not answer
/// (`fail_mode: closed`: 503; they are not in the latencies).
async fn serve(limiters: &[Limiter], secs: f64, concurrency: usize) -> (Vec<Duration>, usize) {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for t in 0..concurrency {
        let limiter = limiters[t % limiters.len()].clone();
        tasks.push(tokio::spawn(async move {
            let (mut took, mut failed) = (Vec::new(), 0usize);
            let mut i = 0u32;
            while Instant::now() < until {
                let ip = std::net::Ipv4Addr::from(0x0a00_0000 + (t as u32) * 65_536 + i % 1000);
                let req = RequestAttrs::new(ip.into());
                let start = Instant::now();
                let d = limiter.check(&req).await;
                if d.is_forward() {
                    took.push(start.elapsed());
                } else {
                    failed += 1;
                }
                i += 1;
            }
            (took, failed)
        }));
    }
    let (mut all, mut failed) = (Vec::new(), 0);
    for t in tasks {
        let (took, f) = t.await.expect("task");
        all.extend(took);
        failed += f;
    }
    all.sort();
    (all, failed)
}

/// This process's CPU time so far (user + system, from `/proc/self/stat`,
/// in clock ticks of 10 ms); zero where there is no `/proc`.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis: utime is the
    // 12th, stime the 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    tick(11) + tick(12)
}

fn quantile(v: &[Duration], q: f64) -> Duration {
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

fn main() {
    let o = opts();
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let url = server.url().to_owned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut limiters = Vec::new();
        let mut followers: Vec<Follower> = Vec::new();
        for id in ["a", "b", "c"] {
            let backend = ValkeyBackend::builder(url.as_str())
                .key_prefix(PREFIX)
                .build()
                .await
                .expect("backend");
            let limiter = Limiter::builder(RuleSet::from_json(RULES).expect("rules"))
                .backend(backend)
                .build();
            let control = ValkeyControl::open(&url, PREFIX).expect("control");
            followers.push(control.follow(limiter.clone(), FollowConfig::new(id)));
            limiters.push(limiter);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let notice = format!("{PREFIX}control{{ctl}}:notice");
        let other = format!("{PREFIX}elsewhere");
        let mut p99 = [Vec::new(), Vec::new(), Vec::new()];
        let mut cpu_per_request = [Vec::new(), Vec::new(), Vec::new()];
        for round in 0..o.rounds {
            let mut phases = [("quiet", None), ("unfollowed", Some(&other)), ("followed", Some(&notice))]
                .into_iter()
                .enumerate()
                .map(|(i, (name, ch))| ((i, name), ch))
                .collect::<Vec<_>>();
            // Each round in another order: no phase always follows another.
            phases.rotate_left(round % 3);
            for (phase, channel) in phases {
                let ((i, name), stop) = (phase, Arc::new(AtomicBool::new(false)));
                let reads: u64 = followers.iter().map(Follower::reads).sum();
                let cpu = cpu_ticks();
                let flooder = channel.map(|ch| flood(url.clone(), ch.clone(), stop.clone()));
                let (took, failed) = serve(&limiters, o.secs, o.concurrency).await;
                stop.store(true, Ordering::Relaxed);
                let sent = flooder.map_or(0, |f| f.join().expect("flooder"));
                let reads = followers.iter().map(Follower::reads).sum::<u64>() - reads;
                let cpu_ms = (cpu_ticks() - cpu) * 10;
                let (p50, q99) = (quantile(&took, 0.5), quantile(&took, 0.99));
                println!(
                    "RESULT round={round} phase={name} requests={} unanswered={failed} p50_us={} p99_us={} notices_sent={sent} state_reads={reads} process_cpu_ms={cpu_ms} cpu_us_per_request={:.1}",
                    took.len(),
                    p50.as_micros(),
                    q99.as_micros(),
                    cpu_ms as f64 * 1000.0 / took.len() as f64
                );
                p99[i].push(q99);
                cpu_per_request[i].push(Duration::from_nanos(cpu_ms * 1_000_000 / took.len().max(1) as u64));
                // Let the last notices drain before the next phase.
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        let median = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64()
        };
        for (what, figures) in [("p99", &mut p99), ("cpu_per_request", &mut cpu_per_request)] {
            let [quiet, unfollowed, followed] = figures;
            let (quiet, unfollowed, followed) =
                (median(quiet), median(unfollowed), median(followed));
            println!(
                "RATIO {what} followed/unfollowed={:.2} unfollowed/quiet={:.2} (medians over {} rounds)",
                followed / unfollowed,
                unfollowed / quiet,
                o.rounds
            );
        }
        drop(followers);
    });
}
