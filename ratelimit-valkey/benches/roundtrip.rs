//! One pipelined round trip of N `EVALSHA` (one per check, the
//! fixed-window script) against one `EVALSHA` of the batch script running
//! the same N checks (what the backend sends for a request's checks on one
//! node), on a local valkey-server. Run:
//! `cargo bench -p ratelimit-valkey --bench roundtrip`.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use ratelimit_core::algorithm::Algorithm;
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::{batch_script_source, script_source};
use redis::aio::MultiplexedConnection;
use redis::Script;

const CHECKS: usize = 7;
const ROUNDS: usize = 3000;
const CONCURRENCY: usize = 16;

fn keys(round: usize) -> Vec<String> {
    (0..CHECKS)
        .map(|i| format!("bench{{{:032x}}}:r{i}:fw:60", round % 512))
        .collect()
}

/// A check's arguments: its head (1: a fixed-window count of cost 1
/// without a penalty), limit, period (no time after the checks: Valkey
/// TIME).
fn args(cmd: &mut redis::Cmd) {
    cmd.arg(1).arg(1_000_000_000u64).arg(60_000);
}

async fn pipelined(conn: &mut MultiplexedConnection, single: &Script, round: usize) {
    let mut pipe = redis::pipe();
    for k in keys(round) {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(single.get_hash()).arg(1).arg(k);
        args(&mut cmd);
        pipe.add_command(cmd);
    }
    let v: Vec<redis::Value> = pipe.query_async(conn).await.expect("pipeline");
    assert_eq!(v.len(), CHECKS);
}

async fn multi_key(conn: &mut MultiplexedConnection, multi: &Script, round: usize) {
    let ks = keys(round);
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(multi.get_hash()).arg(CHECKS).arg(&ks);
    for _ in 0..CHECKS {
        args(&mut cmd);
    }
    let v: String = cmd.query_async(conn).await.expect("batch");
    assert_eq!(v.lines().count(), CHECKS);
}

async fn measure<F, Fut>(name: &str, conn: &MultiplexedConnection, f: F)
where
    F: Fn(MultiplexedConnection, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let start = Instant::now();
    for round in 0..ROUNDS {
        f(conn.clone(), round).await;
    }
    let seq = start.elapsed();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..CONCURRENCY {
        let (f, conn) = (f.clone(), conn.clone());
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS / CONCURRENCY {
                f(conn.clone(), t * 1000 + round).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let par = start.elapsed();
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "{name:<28} sequential {:>7.1} us/request   {CONCURRENCY} concurrent {:>7.1} us/request",
        per(seq, ROUNDS),
        per(par, ROUNDS / CONCURRENCY * CONCURRENCY)
    );
}

fn main() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = redis::Client::open(server.url()).expect("url");
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let single = Script::new(script_source(Algorithm::FixedWindow).expect("a script"));
        let multi = Script::new(batch_script_source());
        for s in [&single, &multi] {
            let _: String = s
                .prepare_invoke()
                .load_async(&mut conn)
                .await
                .expect("load");
        }
        println!("{CHECKS} fixed-window checks per request, {ROUNDS} requests");
        for _ in 0..2 {
            let s = single.clone();
            measure("pipeline of 7 EVALSHA", &conn, move |mut c, r| {
                let s = s.clone();
                async move { pipelined(&mut c, &s, r).await }
            })
            .await;
            let m = multi.clone();
            measure("one 7-key batch EVALSHA", &conn, move |mut c, r| {
                let m = m.clone();
                async move { multi_key(&mut c, &m, r).await }
            })
            .await;
        }
    });
}
