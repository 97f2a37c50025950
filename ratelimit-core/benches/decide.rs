//! Core decision speed against `governor`'s keyed limiter, in the same run.
//!
//! - `single/*`: one keyed rule on the in-memory store (leaky bucket,
//!   sliding window) against `governor::RateLimiter::check_key` (GCRA on a
//!   `DashMap`), with 1 key and with 100,000 keys. Neither side reads a
//!   real clock: ours is handed the time, governor's clock is a
//!   `FakeRelativeClock` standing still (its default reads quanta's on
//!   every check, about 8 to 13 ns here).
//! - `request/*`: a whole request through `Limiter::check` (selection,
//!   expression, keys, 2 rules, verdict).
//!
//! `cargo bench -p ratelimit-core --bench decide`

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use governor::clock::FakeRelativeClock;
use governor::middleware::NoOpMiddleware;
use governor::{Quota as GovQuota, RateLimiter};
use ratelimit_core::backend::Check;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::{Rule, RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, KeyDigest, Limiter, ManualClock, RequestAttrs};

/// governor's middleware for its still clock's instants.
type StillMiddleware = NoOpMiddleware<<FakeRelativeClock as governor::clock::Clock>::Instant>;

const T0: u64 = 1_767_225_600_000;
/// Generous limits so that every call admits, as governor's does.
const LIMIT: u64 = 1_000_000_000;

fn rule(algorithm: &str) -> Rule {
    let b = RuleBuilder::new("api").key(["ip"]);
    match algorithm {
        "leaky_bucket" => b.leaky_bucket(LIMIT, Duration::from_secs(1), LIMIT),
        _ => b.sliding_window(LIMIT, Duration::from_secs(1)),
    }
    .build()
    .expect("valid")
}

/// One check, and the state keys of `keys` subjects: the check is pointed
/// at each subject in turn, so that both sides iterate over an array of
/// 16-byte digests (governor over its keys) and nothing else.
fn checks(rule: &Rule, keys: u32) -> (Check, Vec<KeyDigest>) {
    let rule = Arc::new(rule.clone());
    let ns: Arc<str> = Check::namespace_of(&rule).into();
    let subjects: Vec<KeyDigest> = (0..keys)
        .map(|i| HashKey::DEFAULT.digest(&i.to_le_bytes()))
        .collect();
    let check = Check::new(
        rule.clone(),
        ns.clone(),
        subjects[0],
        rule.quota(1),
        None,
        None,
    );
    let state_keys = subjects
        .iter()
        .map(|s| Check::state_key_of(&ns, s))
        .collect();
    (check, state_keys)
}

fn single(c: &mut Criterion) {
    let mut g = c.benchmark_group("single");
    for keys in [1u32, 100_000] {
        for algorithm in ["leaky_bucket", "sliding_window"] {
            let store = MemoryBackend::with_capacity(200_000);
            let (mut check, state_keys) = checks(&rule(algorithm), keys);
            let mut i = 0usize;
            let mut now = T0;
            g.bench_with_input(BenchmarkId::new(algorithm, keys), &keys, |b, _| {
                b.iter(|| {
                    i = (i + 1) % state_keys.len();
                    now += 1;
                    check.state_key = state_keys[i];
                    black_box(store.check_one(&check, now))
                })
            });
        }
        // A clock that stands still, as ours is handed its time: neither
        // side reads a real clock in the loop (governor's default reads
        // quanta's on every check).
        let gov = RateLimiter::<KeyDigest, _, _, StillMiddleware>::dashmap_with_clock(
            GovQuota::per_second(NonZeroU32::MAX),
            FakeRelativeClock::default(),
        );
        let subjects: Vec<KeyDigest> = (0..keys)
            .map(|i| HashKey::DEFAULT.digest(&i.to_le_bytes()))
            .collect();
        let mut i = 0usize;
        g.bench_with_input(
            BenchmarkId::new("governor_check_key", keys),
            &keys,
            |b, _| {
                b.iter(|| {
                    i = (i + 1) % subjects.len();
                    black_box(gov.check_key(&subjects[i]).is_ok())
                })
            },
        );
    }
    g.finish();
}

/// Polls a future that never waits (the in-memory backend answers at once).
fn ready<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn request(c: &mut Criterion) {
    let rules = RuleSet::from_json(&format!(
        r#"[{{"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
              "limit": {LIMIT}, "period": "1m", "key": ["ip"], "ratelimit_headers": true}},
            {{"id": "login", "expression": "http.request.uri.path eq \"/login\"",
              "algorithm": "leaky_bucket", "limit": {LIMIT}, "burst": {LIMIT}, "period": "1s",
              "key": ["ip", "header:x-user"]}}]"#
    ))
    .expect("valid");
    let clock = ManualClock::new(T0);
    let limiter = Limiter::builder(rules).clock(clock.clone()).build();
    let reqs: Vec<RequestAttrs> = (0..1000u32)
        .map(|i| {
            RequestAttrs::new(
                format!("198.51.{}.{}", i / 250, i % 250)
                    .parse()
                    .expect("ip"),
            )
            .with_method("POST")
            .with_path("/login")
            .with_header("x-user", format!("user{i}"))
        })
        .collect();
    let mut i = 0usize;
    c.bench_function("request/2_rules", |b| {
        b.iter(|| {
            i = (i + 1) % reqs.len();
            black_box(ready(limiter.check(&reqs[i])).is_forward())
        })
    });
}

criterion_group!(benches, single, request);
criterion_main!(benches);
