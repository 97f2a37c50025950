//! A load of concurrent clients on a set of limiters, recording what each
//! request got and how long it took.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ratelimit_core::{Limiter, Outcome, RequestAttrs};

use super::{wall_ms, Latencies, Rng};

/// One answer a client got.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Which limiter answered.
    pub instance: usize,
    /// The request's path.
    pub path: &'static str,
    /// The client's address.
    pub ip: IpAddr,
    /// Wall clock when the request started (Unix ms).
    pub start_ms: u64,
    /// How long the answer took, in microseconds.
    pub latency_us: u64,
    /// The outcome.
    pub outcome: Outcome,
    /// `Retry-After` in seconds, on 429 and 503.
    pub retry_after: Option<u64>,
}

/// Clients sending requests until stopped.
#[derive(Debug)]
pub struct Load {
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    tasks: tokio::task::JoinSet<()>,
}

/// Asks `limiter` about a request for `path` from `ip`, timing it.
pub async fn ask(limiter: &Limiter, instance: usize, path: &'static str, ip: IpAddr) -> Answer {
    let req = RequestAttrs::new(ip).with_path(path);
    let start_ms = wall_ms();
    let t = Instant::now();
    let v = limiter.check(&req).await;
    Answer {
        instance,
        path,
        ip,
        start_ms,
        latency_us: t.elapsed().as_micros() as u64,
        outcome: v.outcome,
        retry_after: v.retry_after_secs(),
    }
}

impl Load {
    /// `clients` clients per limiter, each with its own address
    /// (`10.<seed>.<instance>.<client>`), sending to `paths` in turn with
    /// a pause of 1 to `pause_ms` ms between requests.
    pub fn start(
        limiters: &[Limiter],
        clients: usize,
        paths: &'static [&'static str],
        pause_ms: u64,
        seed: u8,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, limiter) in limiters.iter().enumerate() {
            for c in 0..clients {
                let (limiter, stop, answers) = (limiter.clone(), stop.clone(), answers.clone());
                let ip = IpAddr::from([10, seed, i as u8, c as u8]);
                let mut rng = Rng::new(((seed as u64) << 16) + ((i as u64) << 8) + c as u64 + 1);
                tasks.spawn(async move {
                    let mut n = c;
                    while !stop.load(Ordering::SeqCst) {
                        let path = paths[n % paths.len()];
                        n += 1;
                        let a = ask(&limiter, i, path, ip).await;
                        answers.lock().unwrap_or_else(|e| e.into_inner()).push(a);
                        let pause = 1 + rng.below(pause_ms.max(1));
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                    }
                });
            }
        }
        Self {
            stop,
            answers,
            tasks,
        }
    }

    /// Answers so far.
    pub fn answered(&self) -> usize {
        self.answers.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Stops the clients, waits for every request in flight, and returns
    /// every answer. Panics if a client panicked.
    pub async fn stop(mut self) -> Vec<Answer> {
        self.stop.store(true, Ordering::SeqCst);
        while let Some(r) = self.tasks.join_next().await {
            r.expect("a client task panicked");
        }
        let out = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        out.clone()
    }
}

/// The latencies of `answers`, in ms (rounded up).
pub fn latencies<'a>(answers: impl IntoIterator<Item = &'a Answer>) -> Latencies {
    Latencies(
        answers
            .into_iter()
            .map(|a| a.latency_us.div_ceil(1000))
            .collect(),
    )
}
