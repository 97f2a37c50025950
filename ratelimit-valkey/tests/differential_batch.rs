//! Differential test of the batch script: random timelines of batches of
//! two to five rules of mixed algorithms on one subject (one script call
//! per request), each check in its own mode (count, probe, charge), give
//! the same decisions through Valkey (injected time) as through the core's
//! in-memory backend, and every probe leaves its key exactly as it was.
//!
//! `tests/differential.rs` holds each algorithm's arithmetic to the core's
//! one check at a time; this holds the batch script to running each check
//! as that check's own call would: its arguments found at the right place,
//! no state of one check leaking into the next. `PROPTEST_CASES` sets the
//! cases.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, Check, CheckMode};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, injected, server};

/// A rule: algorithm (0 fixed, 1 sliding, 2 token, 3 leaky, 4 distinct),
/// limit, period in s, burst, penalty in s.
type RuleSpec = (u8, u64, u64, u64, Option<u64>);

/// A step: ms since the last one, then per rule its cost, mode and bit.
type Step = (u64, Vec<(u64, CheckMode, Option<u16>)>);

fn rule_spec() -> impl Strategy<Value = RuleSpec> {
    (
        0u8..5,
        1u64..=6,
        1u64..=3,
        1u64..=6,
        prop::option::of(1u64..=2),
    )
}

fn mode() -> impl Strategy<Value = CheckMode> {
    prop_oneof![
        3 => Just(CheckMode::Count),
        1 => Just(CheckMode::Probe),
        2 => Just(CheckMode::Charge),
    ]
}

fn case() -> impl Strategy<Value = (Vec<RuleSpec>, Vec<Step>)> {
    prop::collection::vec(rule_spec(), 2..=5).prop_flat_map(|rules| {
        let n = rules.len();
        let check = (0u64..=8, mode(), prop::option::weighted(0.9, 0u16..16));
        let step = (0u64..1_200, prop::collection::vec(check, n..=n));
        (Just(rules), prop::collection::vec(step, 1..30))
    })
}

fn rule(i: usize, &(algo, limit, period_s, burst, penalty): &RuleSpec) -> Rule {
    let p = Duration::from_secs(period_s);
    let b = RuleBuilder::new(unique(&format!("b{i}-"))).key(["ip"]);
    let b = match algo {
        0 => b.fixed_window(limit, p),
        1 => b.sliding_window(limit, p),
        2 => b.token_bucket(limit, p, burst),
        3 => b.leaky_bucket(limit, p, burst),
        _ => b.distinct("path", limit, p),
    };
    match penalty {
        Some(s) => b.penalty(Duration::from_secs(s)),
        None => b,
    }
    .build()
    .expect("valid rule")
}

/// The check of `rule` in a step: distinct rules only count, one value
/// each; the others' costs run from 0 to past their limits.
fn check(t: &Check, rule: &Rule, &(cost, mode, bit): &(u64, CheckMode, Option<u16>)) -> Check {
    let distinct = rule.algorithm == ratelimit_core::algorithm::Algorithm::Distinct;
    let (cost, mode, bit) = if distinct {
        (1, CheckMode::Count, bit)
    } else {
        (cost, mode, None)
    };
    check_of(t, rule, "203.0.113.7", cost, bit).with_mode(mode)
}

#[test]
fn batches_of_mixed_rules_match_the_core() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = server();
    let backend = rt.block_on(injected(server.url()));
    let conn = rt.block_on(connect(server.url()));
    let t = rt.block_on(template());
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(), |(specs, steps)| {
        let rules: Vec<Rule> = specs.iter().enumerate().map(|(i, s)| rule(i, s)).collect();
        let memory = MemoryBackend::with_capacity(4096);
        let mut conn = conn.clone();
        let mut now = T0;
        for (n, (dt, checks)) in steps.iter().enumerate() {
            now += dt;
            let checks: Vec<Check> = rules
                .iter()
                .zip(checks)
                .map(|(r, c)| check(&t, r, c))
                .collect();
            let keys: Vec<String> = checks.iter().map(|c| backend.key_of(c)).collect();
            let batch = Batch::new(now, checks.clone());
            let (v, m, before, after) = rt.block_on(async {
                let before = stored(&mut conn, &keys).await;
                let v = backend.check(&batch).await;
                let after = stored(&mut conn, &keys).await;
                (v, memory.check(&batch).await, before, after)
            });
            for (i, c) in checks.iter().enumerate() {
                if c.mode == CheckMode::Probe {
                    prop_assert_eq!(&before[i], &after[i], "step {}: probe {} wrote", n, i);
                }
                let v = v[i].clone();
                let v = v.map_err(|e| TestCaseError::fail(format!("step {n} check {i}: {e}")))?;
                prop_assert_eq!(
                    Ok(v),
                    m[i].clone(),
                    "step {} check {} at now={} {:?} cost={}",
                    n,
                    i,
                    now,
                    c.mode,
                    c.quota.cost
                );
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Each key's serialized value and expiry.
async fn stored(
    conn: &mut redis::aio::MultiplexedConnection,
    keys: &[String],
) -> Vec<(Option<Vec<u8>>, i64)> {
    let mut pipe = redis::pipe();
    for k in keys {
        pipe.cmd("DUMP").arg(k).cmd("PEXPIRETIME").arg(k);
    }
    let flat: Vec<redis::Value> = pipe.query_async(conn).await.expect("DUMP, PEXPIRETIME");
    flat.chunks(2)
        .map(|p| {
            let dump = redis::from_redis_value_ref(&p[0]).expect("a dump");
            let exp = redis::from_redis_value_ref(&p[1]).expect("an expiry");
            (dump, exp)
        })
        .collect()
}
