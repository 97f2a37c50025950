//! Differential test: random timelines through the Lua scripts (injected
//! time) and through the core's in-memory backend give identical decisions,
//! Retry-After, remaining, reset and penalty ends, for all five algorithms,
//! with and without penalty, with costs above 1 for the counting ones.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::store::MemoryBackend;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{injected, server};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algo {
    Fixed,
    Sliding,
    Token,
    Leaky,
    Distinct,
}

#[derive(Debug, Clone)]
struct Case {
    limit: u64,
    period_s: u64,
    burst: u64,
    penalty_s: Option<u64>,
    start: u64,
    steps: Vec<(u64, u64, Option<u16>)>,
}

fn case(algo: Algo) -> impl Strategy<Value = Case> {
    let distinct = algo == Algo::Distinct;
    let max_cost = if distinct { 1 } else { 3 };
    let bits = if distinct {
        prop::option::weighted(0.9, 0u16..24).boxed()
    } else {
        Just(None).boxed()
    };
    (
        1u64..=6,
        1u64..=4,
        1u64..=6,
        prop::option::of(1u64..=3),
        0u64..10_000,
        prop::collection::vec((0u64..1_500, 1u64..=max_cost, bits), 1..40),
    )
        .prop_map(|(limit, period_s, burst, penalty_s, start, steps)| Case {
            limit,
            period_s,
            burst,
            penalty_s,
            start,
            steps,
        })
}

fn rule(algo: Algo, c: &Case) -> Rule {
    let p = Duration::from_secs(c.period_s);
    let b = RuleBuilder::new(unique("d")).key(["ip"]);
    let b = match algo {
        Algo::Fixed => b.fixed_window(c.limit, p),
        Algo::Sliding => b.sliding_window(c.limit, p),
        Algo::Token => b.token_bucket(c.limit, p, c.burst),
        Algo::Leaky => b.leaky_bucket(c.limit, p, c.burst),
        Algo::Distinct => b.distinct("path", c.limit, p),
    };
    let b = match c.penalty_s {
        Some(s) => b.penalty(Duration::from_secs(s)),
        None => b,
    };
    b.build().expect("valid rule")
}

fn run(algo: Algo) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = server();
    let backend = rt.block_on(injected(server.url()));
    let template = rt.block_on(template());
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(algo), |c| {
        let rule = rule(algo, &c);
        let memory = MemoryBackend::with_capacity(16);
        let mut now = T0 + c.start;
        for (i, &(dt, cost, bit)) in c.steps.iter().enumerate() {
            now += dt;
            let check = check_of(&template, &rule, "203.0.113.7", cost, bit);
            let (v, m) = rt.block_on(async {
                (
                    one(&backend, &check, now).await,
                    one(&memory, &check, now).await,
                )
            });
            let v = v.map_err(|e| TestCaseError::fail(format!("step {i}: valkey: {e}")))?;
            let m = m.map_err(|e| TestCaseError::fail(format!("step {i}: memory: {e}")))?;
            prop_assert_eq!(
                v,
                m,
                "step {} at now={} cost={} bit={:?}",
                i,
                now,
                cost,
                bit
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{algo:?}: {e}");
    }
}

#[test]
fn fixed_window_scripts_match_the_core() {
    run(Algo::Fixed);
}

#[test]
fn sliding_window_scripts_match_the_core() {
    run(Algo::Sliding);
}

#[test]
fn token_bucket_scripts_match_the_core() {
    run(Algo::Token);
}

#[test]
fn leaky_bucket_scripts_match_the_core() {
    run(Algo::Leaky);
}

#[test]
fn distinct_scripts_match_the_core() {
    run(Algo::Distinct);
}
