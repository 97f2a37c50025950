//! The scripts' fast paths (count first, read the state from INCRBY's
//! result) at their edges, against the core's in-memory backend: a penalty
//! marker expiring exactly when the window does, counts whose packed value
//! passes 2^53 or 18 digits, and costs too large to count first; and the
//! same for charges (which add past the limit, up to the bounds the core
//! and the scripts share) and probes; and the token bucket's read with
//! GETEX, whose guess of the new expiry can miss.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::backend::namespace;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, Check, CheckMode};
use ratelimit_core::rules::{Rule, RuleBuilder};
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
    let steps: Vec<_> = steps.iter().map(|&(t, c)| (t, c, Count)).collect();
    timeline_modes(name, rule, &steps);
}

use CheckMode::{Charge, Count, Probe};

/// Runs `steps` (time after T0, cost, mode) through Valkey and the core.
fn timeline_modes(name: &str, rule: &Rule, steps: &[(u64, u64, CheckMode)]) {
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
        for (i, &(dt, cost, mode)) in steps.iter().enumerate() {
            let batch = Batch::new(T0 + dt, vec![check(rule, cost).with_mode(mode)]);
            let v = valkey.check(&batch).await;
            let m = memory.check(&batch).await;
            assert_eq!(v, m, "{name}: step {i} at T0+{dt} cost {cost} {mode:?}");
            assert!(v[0].is_ok(), "{name}: step {i}: {v:?}");
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

/// Charges whose totals pass 2^53 (fixed window: saturated, deciding
/// alike), whose packed sliding value passes 2^53, 18 digits and 2^63
/// (current saturating at 2^31 - 1), and whose bucket debt passes 2^51
/// units (saturated), each followed by counts and probes on the fast path.
#[test]
fn charges_past_the_exact_range_take_the_exact_path() {
    let m = Duration::from_secs(60);
    let big = 1_000_000_000;
    let fixed = RuleBuilder::new("edge-fwcharge")
        .key(["ip"])
        .fixed_window(big, m)
        .build()
        .expect("rule");
    let steps = [
        (0, 999_999_999, Charge),
        (1, 1, Probe),
        (2, 1u64 << 52, Charge),
        (3, 1, Count),
        (4, 1, Probe),
        (5, 1u64 << 52, Charge),
        (6, 1, Charge),
        (7, 1u64 << 62, Charge),
        (8, 1, Count),
        (60_000, 1, Probe),
        (60_001, 1, Count),
        (60_002, u64::MAX, Charge),
        (60_003, 1, Count),
    ];
    timeline_modes("fwcharge", &fixed, &steps);
    let sliding = RuleBuilder::new("edge-swcharge")
        .key(["ip"])
        .sliding_window(big, m)
        .build()
        .expect("rule");
    let steps = [
        (0, 899_999, Charge),
        (1, 1, Charge),
        (2, 10, Charge),
        (3, 1, Count),
        (4, 100_000_000, Charge),
        (5, 1, Probe),
        (6, 1u64 << 31, Charge),
        (7, 1, Count),
        (8, 1, Charge),
        (9, 1, Probe),
        (60_000, 1, Probe),
        (60_001, 1, Count),
        (60_002, 5, Charge),
        (119_999, 1, Probe),
        (120_000, 1, Count),
        (120_001, 1u64 << 62, Charge),
        (180_000, 1, Probe),
        (180_001, 1, Count),
        (240_000, 1, Count),
    ];
    timeline_modes("swcharge", &sliding, &steps);
    for (name, rule) in [
        (
            "tbcharge",
            RuleBuilder::new("edge-tbcharge").token_bucket(10, m, 5),
        ),
        (
            "lbcharge",
            RuleBuilder::new("edge-lbcharge").leaky_bucket(10, m, 5),
        ),
    ] {
        let rule = rule.key(["ip"]).build().expect("rule");
        let steps = [
            (0, 1, Count),
            (1, 1u64 << 40, Charge),
            (2, 1, Probe),
            (3, 1u64 << 62, Charge),
            (4, u64::MAX, Charge),
            (5, 1, Count),
            (6_000, 1, Probe),
            (6_001, 0, Charge),
        ];
        timeline_modes(name, &rule, &steps);
    }
}

/// A token-bucket count on a live key reads it with GETEX, which moves the
/// expiry to a guess of where the count puts it: 1 ms late when the limit
/// does not divide the period (7 a second: the count at 600 ms here), and
/// then corrected. A penalty marker read that way keeps its end.
#[test]
fn a_token_bucket_count_corrects_the_getex_guess() {
    let s = Duration::from_secs(1);
    let sevens = RuleBuilder::new("edge-tbguess")
        .key(["ip"])
        .token_bucket(7, s, 5)
        .build()
        .expect("rule");
    let steps: Vec<(u64, u64)> = (0..14).map(|i| (i * 100, 1)).collect();
    timeline("tbguess", &sevens, &steps);
    let penalized = RuleBuilder::new("edge-tbmarker")
        .key(["ip"])
        .token_bucket(5, s, 5)
        .penalty(2 * s)
        .build()
        .expect("rule");
    // Refused at 1 ms: blocked until 2,001. From 1,201 ms on a count fits
    // whatever the key could hold, so the marker is read with GETEX.
    let steps = [(0, 5), (1, 1), (1_600, 1), (2_000, 1), (2_001, 1)];
    timeline("tbmarker", &penalized, &steps);
}

/// A charge over the limit starts the penalty; under it, charges add
/// nothing and probes are refused until its end; then counting starts
/// fresh.
#[test]
fn a_charge_starts_the_penalty() {
    let s = Duration::from_secs(1);
    for (name, rule) in [
        ("fwpen", RuleBuilder::new("edge-fwpen").fixed_window(5, s)),
        ("swpen", RuleBuilder::new("edge-swpen").sliding_window(5, s)),
        (
            "tbpen",
            RuleBuilder::new("edge-tbpen").token_bucket(5, s, 5),
        ),
        (
            "lbpen",
            RuleBuilder::new("edge-lbpen").leaky_bucket(5, s, 5),
        ),
    ] {
        let rule = rule.key(["ip"]).penalty(2 * s).build().expect("rule");
        let steps = [
            (0, 1, Probe),
            (0, 3, Charge),
            (1, 2, Charge),
            (2, 1, Probe),
            (3, 1, Charge),
            (4, 1, Probe),
            (5, 50, Charge),
            (6, 1, Charge),
            (7, 1, Probe),
            (2_004, 1, Probe),
            (2_005, 1, Probe),
            (2_005, 5, Charge),
            (2_006, 1, Count),
        ];
        timeline_modes(name, &rule, &steps);
    }
}

/// `Backend::peek` runs the script as a probe: it answers as the core's
/// peek does and leaves the key exactly as it was (a count of cost 0 used
/// to rewrite a bucket's refilled state).
#[test]
fn peek_writes_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"));
        let valkey = ValkeyBackend::builder(server.url())
            .key_prefix(format!("edge{}peek:", std::process::id()))
            .injected_time(true)
            .deadline(Duration::from_millis(500))
            .build()
            .await
            .expect("backend");
        let mut conn = redis::Client::open(server.url())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("connection");
        let memory = MemoryBackend::with_capacity(16);
        let m = Duration::from_secs(60);
        for rule in [
            RuleBuilder::new("peek-fw").fixed_window(10, m),
            RuleBuilder::new("peek-sw").sliding_window(10, m),
            RuleBuilder::new("peek-tb").token_bucket(10, m, 5),
            RuleBuilder::new("peek-lb").leaky_bucket(10, m, 5),
        ] {
            let rule = rule.key(["ip"]).build().expect("rule");
            let c = check(&rule, 3);
            let batch = Batch::new(T0, vec![c.clone()]);
            assert_eq!(valkey.check(&batch).await, memory.check(&batch).await);
            let key = valkey.key_of(&c);
            let stored = |conn: &mut redis::aio::MultiplexedConnection| {
                let mut pipe = redis::pipe();
                pipe.cmd("DUMP").arg(&key).cmd("PEXPIRETIME").arg(&key);
                let mut conn = conn.clone();
                async move {
                    let v: (Option<Vec<u8>>, i64) =
                        pipe.query_async(&mut conn).await.expect("DUMP");
                    v
                }
            };
            let before = stored(&mut conn).await;
            assert!(before.0.is_some(), "{}: counted", rule.id);
            for dt in [0, 7_000, 13_000] {
                let v = valkey.peek(&c, T0 + dt).await;
                assert_eq!(v, memory.peek(&c, T0 + dt).await, "{} at +{dt}", rule.id);
                assert_eq!(stored(&mut conn).await, before, "{}: peek wrote", rule.id);
            }
        }
    });
}
