//! Support code shared by the integration tests.
#![allow(unreachable_pub, missing_debug_implementations, clippy::print_stderr)]

pub mod aggregate;
pub mod bounds;
pub mod cluster;
pub mod fault_answers;
pub mod fault_calls;
pub mod faults;
pub mod grpc;
pub mod hostile;
pub mod http;
pub mod load;
pub mod record;
pub mod valkey;

use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time in Unix ms: the clock Valkey `TIME` reads on this host.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A key prefix no other test of this process uses: the testkit's
/// [`unique`](ratelimit_testkit::unique) name and a colon.
pub fn unique(tag: &str) -> String {
    format!("{}:", ratelimit_testkit::unique(tag))
}

/// A small xorshift generator: tests need cheap, seedable randomness.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded (a zero seed is replaced).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Latencies of a run, in ms.
#[derive(Debug, Default, Clone)]
pub struct Latencies(pub Vec<u64>);

impl Latencies {
    /// The largest.
    pub fn max(&self) -> u64 {
        self.0.iter().copied().max().unwrap_or(0)
    }

    /// The `q`-quantile (0..=1).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        let mut v = self.0.clone();
        v.sort_unstable();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        v[i.min(v.len() - 1)]
    }
}
