//! The `decide` bench's `single/*` cases timed for a noisy machine: the
//! fastest (and the median) of many rounds, ours and governor's
//! `check_key` alternating round by round in the same run. A round that
//! other processes preempt only gets slower, so the fastest round is the
//! estimate of a quiet machine; the median says how noisy the run was.
//!
//! `cargo bench -p ratelimit-core --bench rounds -- [rounds=41] [per=200000]
//! [keys=1,100000] [only=leaky_bucket|sliding_window|governor]`
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use governor::{Quota as GovQuota, RateLimiter};
use ratelimit_core::backend::namespace;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{state_key, Check};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::{HashKey, KeyDigest};

const T0: u64 = 1_767_225_600_000;
/// Generous limits so that every call admits, as governor's does.
const LIMIT: u64 = 1_000_000_000;
const ALGORITHMS: [&str; 2] = ["leaky_bucket", "sliding_window"];

fn rule(algorithm: &str) -> Rule {
    let b = RuleBuilder::new("api").key(["ip"]);
    match algorithm {
        "leaky_bucket" => b.leaky_bucket(LIMIT, Duration::from_secs(1), LIMIT),
        _ => b.sliding_window(LIMIT, Duration::from_secs(1)),
    }
    .build()
    .expect("valid")
}

/// The value of `name=` among the arguments.
fn arg(name: &str) -> Option<String> {
    std::env::args().find_map(|a| Some(a.strip_prefix(name)?.strip_prefix('=')?.to_string()))
}

/// Times `per` calls of `f`, in ns per call.
fn round(per: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..per {
        f();
    }
    t.elapsed().as_nanos() as f64 / per as f64
}

/// One store (or governor) and its keys, visited in turn.
struct Case {
    name: String,
    times: Vec<f64>,
}

fn main() {
    let rounds: usize = arg("rounds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(41)
        .max(1);
    let per: usize = arg("per").and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let only = arg("only").unwrap_or_default();
    let keys: Vec<u32> = arg("keys")
        .map(|s| s.split(',').filter_map(|k| k.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 100_000]);
    let wanted = |name: &str| only.is_empty() || name == only;
    for n in keys {
        let subjects: Vec<KeyDigest> = (0..n.max(1))
            .map(|i| HashKey::DEFAULT.digest(&i.to_le_bytes()))
            .collect();
        let mut ours = Vec::new();
        for algorithm in ALGORITHMS.into_iter().filter(|a| wanted(a)) {
            let rule = Arc::new(rule(algorithm));
            let ns: Arc<str> = namespace(&rule).into();
            let check = Check::new(
                rule.clone(),
                ns.clone(),
                subjects[0],
                rule.quota(1),
                None,
                None,
            );
            let state_keys: Vec<KeyDigest> = subjects.iter().map(|s| state_key(&ns, s)).collect();
            let store = MemoryBackend::with_capacity(200_000);
            let case = Case {
                name: format!("{algorithm}/{n}"),
                times: Vec::new(),
            };
            ours.push((case, store, check, state_keys));
        }
        let gov = RateLimiter::<KeyDigest, _, _>::dashmap(GovQuota::per_second(NonZeroU32::MAX));
        let mut governor = wanted("governor").then(|| Case {
            name: format!("governor/{n}"),
            times: Vec::new(),
        });
        let (mut i, mut now) = (0usize, T0);
        // Round 0 warms up (fills the stores) and is not counted.
        for r in 0..=rounds {
            for (case, store, check, state_keys) in &mut ours {
                let t = round(per, || {
                    i = if i + 1 >= state_keys.len() { 0 } else { i + 1 };
                    now += 1;
                    check.state_key = state_keys[i];
                    black_box(store.check_one(check, now));
                });
                if r > 0 {
                    case.times.push(t);
                }
            }
            if let Some(case) = &mut governor {
                let t = round(per, || {
                    i = if i + 1 >= subjects.len() { 0 } else { i + 1 };
                    black_box(gov.check_key(&subjects[i]).is_ok());
                });
                if r > 0 {
                    case.times.push(t);
                }
            }
        }
        for case in ours.into_iter().map(|o| o.0).chain(governor) {
            let mut t = case.times;
            t.sort_by(f64::total_cmp);
            println!(
                "{:<24} fastest {:7.1} ns  median {:7.1} ns  ({} rounds of {per})",
                case.name,
                t[0],
                t[t.len() / 2],
                t.len()
            );
        }
    }
}
