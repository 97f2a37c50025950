//! The keyed API on Valkey: the same decisions as the memory backend over
//! a few timelines, and a fleet of limiters sharing one key admits exactly
//! the limit in total.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ratelimit_core::keyed::{KeyedDecision, KeyedError, KeyedLimit, Quota};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock};
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::ValkeyBackend;

/// 2026-01-01T00:00:00Z.
const T0: u64 = 1_767_225_600_000;

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

fn server() -> ValkeyServer {
    ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"))
}

fn prefix() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "kt{}x{}:",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

const RULES: &str = r#"[{"id": "jobs", "expression": "false",
    "algorithm": "fixed_window", "limit": 2, "period": "1s",
    "key": ["ip"], "penalty": "2s"}]"#;

/// One step of a timeline.
#[derive(Debug, Clone, Copy)]
enum Op {
    Check(u64),
    Peek,
    Reset,
}

/// A small deterministic timeline: (ms to advance, key, op).
fn timeline(seed: u64) -> Vec<(u64, u8, Op)> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..60)
        .map(|_| {
            let advance = [0, 0, 0, 1, 50, 125, 250, 400, 999, 1700][(next() % 10) as usize];
            let key = (next() % 2) as u8;
            let op = match next() % 12 {
                0 => Op::Reset,
                1 | 2 => Op::Peek,
                n => Op::Check(1 + n % 3),
            };
            (advance, key, op)
        })
        .collect()
}

/// One op's answer; a reset answers no decision.
async fn run(limit: &KeyedLimit, op: Op, key: u8) -> Result<Option<KeyedDecision>, KeyedError> {
    match op {
        Op::Check(cost) => limit.check_n(&("k", key), cost).await.map(Some),
        Op::Peek => limit.peek(&("k", key)).await.map(Some),
        Op::Reset => limit.reset(&("k", key)).await.map(|()| None),
    }
}

type Make = fn(&Limiter) -> KeyedLimit;

const CASES: [(&str, Make); 6] = [
    ("token bucket 3/s burst 5", |l| {
        l.keyed_quota("tb", Quota::per_second(nz(3)).allow_burst(nz(5)))
    }),
    ("leaky bucket 2/s burst 4", |l| {
        l.keyed_quota(
            "lb",
            Quota::per_second(nz(2)).allow_burst(nz(4)).leaky_bucket(),
        )
    }),
    ("fixed window 4 per 2 s", |l| {
        let q = Quota::with_period(nz(4), Duration::from_secs(2)).expect("period");
        l.keyed_quota("fw", q.fixed_window())
    }),
    ("sliding window 3 per 2 s", |l| {
        let q = Quota::with_period(nz(3), Duration::from_secs(2)).expect("period");
        l.keyed_quota("sw", q.sliding_window())
    }),
    ("token bucket 2 per 250 ms", |l| {
        let q = Quota::with_period(nz(2), Duration::from_millis(250)).expect("period");
        l.keyed_quota("tb250", q)
    }),
    ("rule jobs: fixed window 2/s, penalty 2 s", |l| {
        l.keyed_rule("jobs").expect("rule")
    }),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valkey_decides_keyed_calls_as_the_memory_backend_does() {
    let server = server();
    let rules = RuleSet::from_json(RULES).expect("rules");
    for (name, make) in CASES {
        let (mut admitted, mut refused) = (0, 0);
        for seed in 1..=4u64 {
            let start = T0 + seed * 7_919;
            let (mc, vc) = (ManualClock::new(start), ManualClock::new(start));
            let memory = Limiter::builder(rules.clone()).clock(mc.clone()).build();
            let backend = ValkeyBackend::builder(server.url())
                .key_prefix(prefix())
                .injected_time(true)
                .deadline(Duration::from_secs(2))
                .build()
                .await
                .expect("backend");
            let valkey = Limiter::builder(rules.clone())
                .clock(vc.clone())
                .backend(backend)
                .build();
            let (m, v) = (make(&memory), make(&valkey));
            for (step, (advance, key, op)) in timeline(seed).into_iter().enumerate() {
                mc.advance(Duration::from_millis(advance));
                vc.advance(Duration::from_millis(advance));
                let (a, b) = (run(&m, op, key).await, run(&v, op, key).await);
                assert_eq!(
                    a,
                    b,
                    "{name}, seed {seed}, step {step} ({op:?} key {key}) at {} ms",
                    {
                        use ratelimit_core::Clock;
                        mc.now_ms() - T0
                    }
                );
                if let (Op::Check(_), Ok(Some(d))) = (op, &b) {
                    assert!(!d.is_degraded(), "{name}: Valkey answered");
                    if d.is_allowed() {
                        admitted += 1;
                    } else {
                        refused += 1;
                    }
                }
            }
        }
        assert!(
            admitted > 10 && refused > 10,
            "{name}: the timelines admit and refuse ({admitted} / {refused})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_limiters_sharing_one_key_admit_exactly_the_limit() {
    let server = server();
    let prefix = prefix();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let backend = ValkeyBackend::builder(server.url())
            .key_prefix(prefix.clone())
            .deadline(Duration::from_secs(2))
            .build()
            .await
            .expect("backend");
        let limiter = Limiter::builder(RuleSet::default())
            .backend(backend)
            .build();
        // 20 per hour: not one token refills during the test.
        let api = limiter.keyed_quota("partner-api", Quota::per_hour(nz(20)));
        tasks.push(tokio::spawn(async move {
            let mut admitted = 0u32;
            for _ in 0..15 {
                let d = api
                    .check("api.partner.example")
                    .await
                    .expect("valkey answers");
                assert!(!d.is_degraded());
                admitted += u32::from(d.is_allowed());
            }
            admitted
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("task");
    }
    assert_eq!(total, 20, "60 calls, 20 admitted over the fleet");
}
