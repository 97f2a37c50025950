//! Differential test: random timelines through the Lua scripts (injected
//! time) and through the core's in-memory backend give identical decisions,
//! Retry-After, remaining, reset and penalty ends, for all five algorithms,
//! with and without penalty, with costs above 1 for the counting ones.
//! The counting algorithms mix the three check modes: counts, probes (which
//! must leave the Valkey key exactly as it was, value and expiry) and
//! charges of random costs, many far past the limit.
//!
//! The scripts compute every number of the decision themselves, so this
//! holds their arithmetic to the core's: small quotas (many refusals), and
//! large ones (limits up to 10^9, periods up to a day, costs up to beyond
//! the limit) where products pass 2^53 and the scripts' exact `muldiv` and
//! split divisions are needed; and small ones with a publish mid-way that
//! changes the rule's `limit`, `burst` or `period` (issue 39: the token
//! bucket's script misread its state after a change of limit, which no
//! timeline had). `PROPTEST_CASES` sets the cases per test.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ratelimit_core::backend::CheckMode;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, injected, server};
use redis::aio::MultiplexedConnection;

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
    steps: Vec<(u64, u64, Option<u16>, CheckMode)>,
    /// A publish before step `.0` that changes the rule's limit, period
    /// (seconds) and burst to `.1`, `.2`, `.3` (same id).
    publish: Option<(usize, u64, u64, u64)>,
}

/// A step's mode and, for a charge, its cost: `share` in per mille of the
/// limit (or burst), up to 1000 times it.
fn mode(algo: Algo) -> BoxedStrategy<(CheckMode, u64)> {
    if algo == Algo::Distinct {
        return Just((CheckMode::Count, 0)).boxed();
    }
    let share = prop_oneof![
        3 => 0u64..=1_500,
        1 => 0u64..=20_000,
        1 => 1_000u64..=1_000_000,
    ];
    prop_oneof![
        3 => Just((CheckMode::Count, 0)),
        2 => Just((CheckMode::Probe, 0)),
        3 => share.prop_map(|s| (CheckMode::Charge, s)),
    ]
    .boxed()
}

/// The cost of a step: a charge's share of `base`, else `cost`.
fn cost_of((mode, share): (CheckMode, u64), base: u64, cost: u64) -> u64 {
    if mode == CheckMode::Charge {
        base.saturating_mul(share) / 1000
    } else {
        cost
    }
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
        prop::collection::vec((0u64..1_500, 1u64..=max_cost, bits, mode(algo)), 1..40),
    )
        .prop_map(move |(limit, period_s, burst, penalty_s, start, steps)| {
            let base = if matches!(algo, Algo::Token | Algo::Leaky) {
                burst
            } else {
                limit
            };
            let steps = steps
                .into_iter()
                .map(|(dt, cost, bit, m)| (dt, cost_of(m, base, cost), bit, m.0))
                .collect();
            Case {
                limit,
                period_s,
                burst,
                penalty_s,
                start,
                steps,
                publish: None,
            }
        })
}

/// A small case with a publish mid-way that changes `limit`, `burst` or
/// `period` (or several): the stored state is kept, rescaled or started
/// fresh as `docs/rules.md` ("What a publish keeps") says, alike on both.
fn publish_case(algo: Algo) -> impl Strategy<Value = Case> {
    let change = (0usize..40, 1u64..=6, 1u64..=4, 1u64..=6, 0u8..7);
    (case(algo), change).prop_map(|(mut c, (at, limit, period_s, burst, which))| {
        // Which fields change: limit, period, burst, as bits (0: limit
        // alone).
        let pick = |bit: u8, new: u64, old: u64| {
            if which & bit != 0 || which == 0 && bit == 1 {
                new
            } else {
                old
            }
        };
        c.publish = Some((
            at % (c.steps.len() + 1),
            pick(1, limit, c.limit),
            pick(2, period_s, c.period_s),
            pick(4, burst, c.burst),
        ));
        c
    })
}

/// Large quotas: steps a random share of the period apart, costs a random
/// share (up to 120%) of the limit or burst.
fn big_case(algo: Algo) -> impl Strategy<Value = Case> {
    let distinct = algo == Algo::Distinct;
    let bucket = matches!(algo, Algo::Token | Algo::Leaky);
    let amount = || {
        prop_oneof![
            1u64..=6,
            1_000u64..=1_000_000,
            900_000_000u64..=1_000_000_000
        ]
    };
    let limits = if distinct {
        (1u64..=80).boxed()
    } else {
        amount().boxed()
    };
    let bits = if distinct {
        prop::option::weighted(0.95, 0u16..1024).boxed()
    } else {
        Just(None).boxed()
    };
    // Distinct: enough values, close enough together, to fill a period.
    let (steps, spread) = if distinct { (90, 50) } else { (40, 1) };
    (
        limits,
        prop_oneof![1u64..=4, 3_600u64..=86_400],
        amount(),
        prop::option::of(1u64..=3),
        0u64..1_000,
        prop::collection::vec((0u64..1_500, 0u64..=120, bits, mode(algo)), 1..steps),
    )
        .prop_map(move |(limit, period_s, burst, penalty_s, start, steps)| {
            let period_ms = period_s * 1000;
            // Within the crate's documented limits: the buckets need
            // (burst + cost) * period below 2^53.
            let burst = match algo {
                Algo::Token | Algo::Leaky => burst.min((1u64 << 53) / period_ms / 4).max(1),
                _ => burst,
            };
            let base = if bucket { burst } else { limit };
            let steps = steps
                .into_iter()
                .map(|(per_mille, pct, bit, m)| {
                    let cost = if distinct {
                        1
                    } else {
                        cost_of(m, base, (base * pct / 100).max(1))
                    };
                    (period_ms * per_mille / spread / 1000, cost, bit, m.0)
                })
                .collect();
            Case {
                limit,
                period_s,
                burst,
                penalty_s,
                start: period_ms * start / 1000,
                steps,
                publish: None,
            }
        })
}

/// The rule of `c`, with the id `id`, at `(limit, period_s, burst)`.
fn rule(algo: Algo, c: &Case, id: &str, (limit, period_s, burst): (u64, u64, u64)) -> Rule {
    let p = Duration::from_secs(period_s);
    let b = RuleBuilder::new(id).key(["ip"]);
    let b = match algo {
        Algo::Fixed => b.fixed_window(limit, p),
        Algo::Sliding => b.sliding_window(limit, p),
        Algo::Token => b.token_bucket(limit, p, burst),
        Algo::Leaky => b.leaky_bucket(limit, p, burst),
        Algo::Distinct => b.distinct("path", limit, p),
    };
    let b = match c.penalty_s {
        Some(s) => b.penalty(Duration::from_secs(s)),
        None => b,
    };
    b.build().expect("valid rule")
}

/// Which cases a run draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Small,
    Large,
    Publish,
}

fn run(algo: Algo, big: bool) {
    run_kind(algo, if big { Kind::Large } else { Kind::Small });
}

fn run_kind(algo: Algo, kind: Kind) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = server();
    let backend = rt.block_on(injected(server.url()));
    let conn = rt.block_on(connect(server.url()));
    let template = rt.block_on(template());
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = match kind {
        Kind::Small => case(algo).boxed(),
        Kind::Large => big_case(algo).boxed(),
        Kind::Publish => publish_case(algo).boxed(),
    };
    let result = runner.run(&strategy, |c| {
        let id = unique("d");
        let mut rule = rule(algo, &c, &id, (c.limit, c.period_s, c.burst));
        let memory = MemoryBackend::with_capacity(16);
        let mut conn = conn.clone();
        let mut now = T0 + c.start;
        for (i, &(dt, cost, bit, mode)) in c.steps.iter().enumerate() {
            if let Some((_, limit, period_s, burst)) = c.publish.filter(|p| p.0 == i) {
                rule = self::rule(algo, &c, &id, (limit, period_s, burst));
            }
            now += dt;
            let check = check_of(&template, &rule, "203.0.113.7", cost, bit).with_mode(mode);
            let key = backend.key_of(&check);
            let (v, m, before, after) = rt.block_on(async {
                let before = stored(&mut conn, &key).await;
                let v = one(&backend, &check, now).await;
                let after = stored(&mut conn, &key).await;
                (v, one(&memory, &check, now).await, before, after)
            });
            if mode == CheckMode::Probe {
                prop_assert_eq!(before, after, "step {}: a probe wrote", i);
            }
            let v = v.map_err(|e| TestCaseError::fail(format!("step {i}: valkey: {e}")))?;
            let m = m.map_err(|e| TestCaseError::fail(format!("step {i}: memory: {e}")))?;
            prop_assert_eq!(
                v,
                m,
                "step {} at now={} cost={} bit={:?} {:?}",
                i,
                now,
                cost,
                bit,
                mode
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{algo:?} ({kind:?}): {e}");
    }
}

/// What Valkey holds under `key`: its serialized value and its expiry.
async fn stored(conn: &mut MultiplexedConnection, key: &str) -> (Option<Vec<u8>>, i64) {
    let mut pipe = redis::pipe();
    pipe.cmd("DUMP").arg(key).cmd("PEXPIRETIME").arg(key);
    pipe.query_async(conn).await.expect("DUMP, PEXPIRETIME")
}

#[test]
fn fixed_window_scripts_match_the_core() {
    run(Algo::Fixed, false);
}

#[test]
fn fixed_window_scripts_match_the_core_on_large_quotas() {
    run(Algo::Fixed, true);
}

#[test]
fn sliding_window_scripts_match_the_core() {
    run(Algo::Sliding, false);
}

#[test]
fn sliding_window_scripts_match_the_core_on_large_quotas() {
    run(Algo::Sliding, true);
}

#[test]
fn token_bucket_scripts_match_the_core() {
    run(Algo::Token, false);
}

#[test]
fn token_bucket_scripts_match_the_core_on_large_quotas() {
    run(Algo::Token, true);
}

#[test]
fn leaky_bucket_scripts_match_the_core() {
    run(Algo::Leaky, false);
}

#[test]
fn leaky_bucket_scripts_match_the_core_on_large_quotas() {
    run(Algo::Leaky, true);
}

#[test]
fn distinct_scripts_match_the_core() {
    run(Algo::Distinct, false);
}

#[test]
fn distinct_scripts_match_the_core_on_large_quotas() {
    run(Algo::Distinct, true);
}

#[test]
fn fixed_window_scripts_match_the_core_across_publishes() {
    run_kind(Algo::Fixed, Kind::Publish);
}

#[test]
fn sliding_window_scripts_match_the_core_across_publishes() {
    run_kind(Algo::Sliding, Kind::Publish);
}

/// Issue 39, finding 7: the token bucket's script read its last update
/// from the key's expiry under the current limit, which a publish that
/// changed the limit made wrong.
#[test]
fn token_bucket_scripts_match_the_core_across_publishes() {
    run_kind(Algo::Token, Kind::Publish);
}

#[test]
fn leaky_bucket_scripts_match_the_core_across_publishes() {
    run_kind(Algo::Leaky, Kind::Publish);
}

#[test]
fn distinct_scripts_match_the_core_across_publishes() {
    run_kind(Algo::Distinct, Kind::Publish);
}
