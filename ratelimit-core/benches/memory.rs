//! Bytes per key of the in-process stores, from the process's resident set
//! size (`/proc/self/statm`) before and after filling them:
//!
//! - the in-memory backend (`MemoryBackend`, the default 1,000,000 subjects)
//!   filled with 1,000,000 sliding-window subjects, then another with
//!   1,000,000 distinct subjects (whose 1024-bit map is boxed);
//! - the penalty cache (`PenaltyCache`, the default 100,000 keys) filled
//!   with 100,000 blocks.
//!
//! Everything filled stays alive until the end, so that each figure is
//! memory newly taken from the system, not reused. Target: <= 128 bytes
//! per state (sliding window and penalty).
//!
//! `cargo bench -p ratelimit-core --bench memory` (Linux only).
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratelimit_core::backend::namespace;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{state_key, Check};
use ratelimit_core::limiter::PenaltyCache;
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::{HashKey, KeyDigest};

const T0: u64 = 1_767_225_600_000;
const STORE_KEYS: u32 = 1_000_000;
const PENALTY_KEYS: u32 = 100_000;
/// The page size of x86_64 and aarch64 Linux (the unit of statm).
const PAGE: u64 = 4096;

/// Resident bytes of this process.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("resident pages");
    pages * PAGE
}

fn subject(i: u32) -> KeyDigest {
    HashKey::DEFAULT.digest(&i.to_le_bytes())
}

/// Fills a store of capacity `n` with `n` subjects under `rule`; returns it,
/// bytes per subject held, and how many it holds.
fn fill_store(rule: Rule, n: u32) -> (MemoryBackend, f64, usize, Duration) {
    let rule = Arc::new(rule);
    let ns = namespace(&rule);
    let bit = rule.distinct_of.as_ref().map(|_| 7);
    let mut check = Check::new(
        rule.clone(),
        ns.as_str().into(),
        subject(0),
        rule.quota(1),
        None,
        bit,
    );
    let before = rss();
    let start = Instant::now();
    let store = MemoryBackend::with_capacity(n as usize);
    for i in 0..n {
        check.subject = subject(i);
        check.state_key = state_key(&ns, &check.subject);
        let d = store.check_one(&check, T0 + u64::from(i % 1000));
        assert!(d.allowed);
    }
    let took = start.elapsed();
    // The shards split the capacity evenly and random keys do not: a few
    // shards fill (and evict) before the whole store is full.
    let held = store.len();
    let per = (rss() - before) as f64 / held as f64;
    (store, per, held, took)
}

fn main() {
    let m = Duration::from_secs(60);
    let before = rss();
    let cache = PenaltyCache::default();
    for i in 0..PENALTY_KEYS {
        cache.block(subject(i), T0 + 300_000, T0);
    }
    let held = cache.len();
    let penalty = (rss() - before) as f64 / held as f64;
    println!(
        "penalty cache:  {PENALTY_KEYS} blocks asked, {held} held ({} dropped: full shards), \
         {penalty:.1} bytes per key (target 128)",
        cache.dropped()
    );

    let sliding = RuleBuilder::new("mem-sw")
        .key(["ip"])
        .sliding_window(1_000_000, m)
        .build()
        .expect("rule");
    let (store_sw, sw, held, took) = fill_store(sliding, STORE_KEYS);
    println!(
        "memory store:   {STORE_KEYS} sliding_window subjects asked, {held} held, \
         {sw:.1} bytes per subject (target 128); filled in {took:?}"
    );

    let distinct = RuleBuilder::new("mem-dc")
        .key(["ip"])
        .distinct("path", 1000, m)
        .build()
        .expect("rule");
    let (store_dc, dc, held, took) = fill_store(distinct, STORE_KEYS);
    println!(
        "memory store:   {STORE_KEYS} distinct subjects asked, {held} held, \
         {dc:.1} bytes per subject (its 128-byte map boxed); filled in {took:?}"
    );
    println!(
        "RESULT penalty_bytes_per_key={penalty:.1} store_sliding_bytes_per_key={sw:.1} \
         store_distinct_bytes_per_key={dc:.1}"
    );
    drop((cache, store_sw, store_dc));
}
