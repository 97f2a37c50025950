//! Outbound client: throttle calls to a third-party API that the whole
//! fleet shares, with the keyed API and `until_ready`.
//!
//! The partner allows 5 calls per second per API host to our account, all
//! instances together. Each instance holds a `Limiter` on the same Valkey;
//! before a call, a worker waits (at most 3 seconds, with up to 100 ms of
//! jitter so waiters do not wake together) until the fleet-wide quota admits
//! it. Here 4 workers make 6 calls each to one host: the first 5 go at once,
//! then one every 200 ms.
//!
//! With `VALKEY_URL` set (e.g. `redis://127.0.0.1:6379`) the quota is shared
//! by every process running this example against that server; without it the
//! example falls back to the in-memory backend (this process only) and says
//! so.
//!
//! ```text
//! VALKEY_URL=redis://127.0.0.1:6379 cargo run --example outbound_client
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use ratelimit_core::keyed::{KeyedError, KeyedLimit, Quota};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_valkey::ValkeyBackend;

/// The partner's limit: 5 calls per second, no more than 5 at once.
const PARTNER: Quota = Quota::per_second(NonZeroU32::new(5).unwrap());

/// How long a caller is willing to wait for its turn.
const MAX_WAIT: Duration = Duration::from_secs(3);

async fn limiter() -> Limiter {
    let builder = Limiter::builder(RuleSet::default());
    match std::env::var("VALKEY_URL") {
        Ok(url) => match ValkeyBackend::builder(url.as_str()).build().await {
            Ok(backend) => {
                println!("sharing the partner quota through Valkey at {url}");
                builder.backend(backend).build()
            }
            Err(e) => {
                eprintln!("note: Valkey at {url} unavailable ({e}); counting in memory");
                builder.build()
            }
        },
        Err(_) => {
            println!("note: VALKEY_URL is not set; counting in this process's memory only");
            builder.build()
        }
    }
}

/// Stands in for the HTTP call to the partner.
async fn call_partner(host: &str, worker: usize, n: usize) -> String {
    format!("GET https://{host}/v1/items?page={n} (worker {worker})")
}

async fn worker(api: KeyedLimit, worker: usize, started: Instant) -> Result<(), KeyedError> {
    let host = "api.partner.example";
    for n in 0..6 {
        // Sleeps until the fleet-wide quota admits this call, or gives up.
        match api.until_ready(host, MAX_WAIT, tokio::time::sleep).await {
            Ok(d) => {
                let reply = call_partner(host, worker, n).await;
                println!(
                    "{:>5} ms  {reply}  (remaining {})",
                    started.elapsed().as_millis(),
                    d.remaining()
                );
            }
            Err(KeyedError::WaitTooLong { wait, .. }) => {
                println!("worker {worker}: next turn in {wait:?}, past {MAX_WAIT:?} of waiting; skipping call {n}");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), KeyedError> {
    let limiter = limiter().await;
    let api = limiter
        .keyed_quota("partner-api", PARTNER)
        .with_jitter(Duration::from_millis(100));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..4 {
        tasks.push(tokio::spawn(worker(api.clone(), w, started)));
    }
    for t in tasks {
        match t.await {
            Ok(result) => result?,
            Err(e) => eprintln!("worker failed: {e}"),
        }
    }
    println!("done in {} ms", started.elapsed().as_millis());
    Ok(())
}
