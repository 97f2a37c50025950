//! Replay throughput: log lines per second through a 5-rule set on one
//! core (the in-memory backend, the clock set per line), for both log
//! formats. Prints a table.
//!
//!     cargo bench -p ratelimit-cli --bench replay
//!
//! `LINES` sets the number of lines (default 2,000,000), `FORMAT` one
//! format only (`combined` or `json`; both by default). Besides the wall
//! time, the thread's own CPU time (`/proc/thread-self/schedstat`) gives
//! lines per CPU second: what one core does, also on a shared machine.

#![allow(clippy::print_stdout)]

use std::io::Cursor;
use std::time::Instant;

use ratelimit_cli::{LogFormat, Replay};
use ratelimit_core::rules::RuleSet;

const RULES: &str = r#"[
  {"id": "per-ip", "expression": "true", "algorithm": "token_bucket", "limit": 600,
   "period": "1m", "burst": 100, "key": ["ip"]},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\" and http.request.method eq \"POST\"",
   "algorithm": "sliding_window", "limit": 5, "period": "1m", "key": ["ip"], "penalty": "5m"},
  {"id": "api", "expression": "starts_with(http.request.uri.path, \"/api/\")",
   "algorithm": "token_bucket", "limit": 60, "period": "1m", "burst": 10, "key": ["ip"]},
  {"id": "search", "expression": "http.request.uri.path eq \"/search\"",
   "algorithm": "sliding_window", "limit": 30, "period": "1m", "key": ["ip", "header:user-agent"]},
  {"id": "bots", "expression": "http.user_agent contains \"bot\"",
   "algorithm": "fixed_window", "limit": 100, "period": "1m", "key": ["ip"], "action": "log"}
]"#;

const REQUESTS: [&str; 5] = [
    "GET /api/items",
    "POST /login",
    "GET /search?q=x",
    "GET /",
    "GET /api/items/42",
];
const AGENTS: [&str; 3] = ["Mozilla/5.0", "curl/8.5", "examplebot/1.0"];

/// `n` lines, 10,000 clients, one line a millisecond apart.
fn log(n: usize, format: LogFormat) -> String {
    let mut out = String::with_capacity(n * 130);
    let start = 1_796_119_200u64;
    for i in 0..n {
        let ip = format!("10.{}.{}.{}", i % 7, (i / 7) % 40, (i * 31) % 251);
        let (req, agent) = (REQUESTS[i % 5], AGENTS[i % 3]);
        let ms = start * 1000 + i as u64;
        let line = match format {
            LogFormat::Combined => {
                let s = ms / 1000 - start;
                let (h, m, sec) = (10 + s / 3600, s / 60 % 60, s % 60);
                format!("{ip} - - [01/Dec/2026:{h:02}:{m:02}:{sec:02} +0000] \"{req} HTTP/1.1\" 200 512 \"-\" \"{agent}\"\n")
            }
            _ => {
                let (method, path) = req.split_once(' ').unwrap();
                format!(
                    "{{\"ip\": \"{ip}\", \"time\": {}.{:03}, \"method\": \"{method}\", \"path\": \"{path}\", \"headers\": {{\"user-agent\": \"{agent}\"}}}}\n",
                    ms / 1000,
                    ms % 1000
                )
            }
        };
        out.push_str(&line);
    }
    out
}

/// This thread's CPU time in seconds, when Linux tells it.
fn cpu_secs() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn main() {
    let n: usize = std::env::var("LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let rules = RuleSet::from_json(RULES).expect("the bench's rules load");
    println!(
        "{:<10} {:>10} {:>9} {:>14} {:>9} {:>18} {:>10}",
        "format", "lines", "seconds", "lines/s", "cpu s", "lines/cpu-second", "limited"
    );
    let only = std::env::var("FORMAT").ok();
    for (name, format) in [("combined", LogFormat::Combined), ("json", LogFormat::Json)] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let text = log(n, format);
        let mut replay = Replay::new(rules.clone(), format);
        let (started, cpu0) = (Instant::now(), cpu_secs());
        replay
            .read(Cursor::new(text.as_bytes()))
            .expect("in memory");
        let secs = started.elapsed().as_secs_f64();
        let cpu = cpu_secs().zip(cpu0).map_or(f64::NAN, |(b, a)| b - a);
        let t = &replay.tally;
        assert_eq!((t.lines, t.bad), (n as u64, 0));
        println!(
            "{name:<10} {:>10} {secs:>9.3} {:>14.0} {cpu:>9.3} {:>18.0} {:>10}",
            t.lines,
            t.lines as f64 / secs,
            t.lines as f64 / cpu,
            t.outcomes[1]
        );
    }
}
