//! The scripts' fast paths (count first, read the state from INCRBY's
//! result) at their edges, against the core's in-memory backend: a penalty
//! marker expiring exactly when the window does, counts whose packed value
//! passes 2^53 or 18 digits, and costs too large to count first.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::backend::namespace;
use ratelimit_core::backend::{Backend, Batch, Check};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::store::MemoryBackend;
use ratelimit_core::HashKey;

use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::ValkeyBackend;

/// 2026-01-01T00:00:00Z: a multiple of every period below.
const T0: u64 = 1_767_225_600_000;

fn check(rule: &Rule, cost: u64) -> Check {
    let rule = Arc::new(rule.clone());
    let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
    Check::new(
        rule.clone(),
        namespace(&rule).into(),
        subject,
        rule.quota(cost),
        rule.penalty_ms,
        None,
    )
}

/// Runs `steps` (time after T0, cost) through Valkey and the core.
fn timeline(name: &str, rule: &Rule, steps: &[(u64, u64)]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"));
        let valkey = ValkeyBackend::builder(server.url())
            .key_prefix(format!("edge{}{name}:", std::process::id()))
            .injected_time(true)
            .deadline(Duration::from_millis(500))
            .build()
            .await
            .expect("backend");
        let memory = MemoryBackend::with_capacity(16);
        for (i, &(dt, cost)) in steps.iter().enumerate() {
            let batch = Batch::new(T0 + dt, vec![check(rule, cost)]);
            let v = valkey.check(&batch).await;
            let m = memory.check(&batch).await;
            assert_eq!(v, m, "{name}: step {i} at T0+{dt} cost {cost}");
        }
    });
}

#[test]
fn a_marker_ending_with_the_window_blocks_on_the_fast_path() {
    let s = Duration::from_secs(1);
    let fixed = RuleBuilder::new("edge-fw")
        .key(["ip"])
        .fixed_window(1, s)
        .penalty(s)
        .build()
        .expect("rule");
    // Refused at the window's start: the marker ends with the window.
    let steps = [(0, 1), (0, 1), (500, 1), (999, 3), (1000, 1), (1000, 1)];
    timeline("fw", &fixed, &steps);
    let sliding = RuleBuilder::new("edge-sw")
        .key(["ip"])
        .sliding_window(1, s)
        .penalty(2 * s)
        .build()
        .expect("rule");
    let steps = [(0, 1), (0, 1), (500, 1), (1999, 2), (2000, 1), (3000, 1)];
    timeline("sw", &sliding, &steps);
}

#[test]
fn large_counts_and_costs_take_the_exact_path() {
    let m = Duration::from_secs(60);
    let big = 1_000_000_000;
    let sliding = RuleBuilder::new("edge-swbig")
        .key(["ip"])
        .sliding_window(big, m)
        .build()
        .expect("rule");
    // Packed current * 10^10 + previous: exact below 2^53 (current
    // below ~900,000), 19 digits from current 10^8 (stored as a string).
    let steps = [
        (0, 899_999),
        (1, 1),
        (2, 5),
        (3, 100_000_000),
        (4, 1),
        (5, 1u64 << 60),
        (6, 1),
        (60_000, 7),
        (60_001, 1),
        (60_002, 200_000_000),
        (60_003, 1),
        (60_004, 3),
        (61_000, 900_000_000),
        (61_001, 1),
        (120_000, 1),
        (120_001, 1),
    ];
    timeline("swbig", &sliding, &steps);
    let fixed = RuleBuilder::new("edge-fwbig")
        .key(["ip"])
        .fixed_window(big, m)
        .build()
        .expect("rule");
    let steps = [
        (0, 1),
        (1, 999_999_998),
        (2, 1u64 << 62),
        (3, 1),
        (4, 1),
        (60_000, 1),
    ];
    timeline("fwbig", &fixed, &steps);
}
