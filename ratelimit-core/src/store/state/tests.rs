//! `step` over a plain map of [`State`]s decides as the in-memory backend:
//! the store seam's general path against the packed fast path, every
//! algorithm, mode and penalty, with states dropped at their expiry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::backend::{namespace, Backend, Batch, CheckResult};
use crate::rules::RuleBuilder;
use crate::store::{MemoryBackend, StateStore, StoreBackend};
use crate::{HashKey, KeyDigest};

const T0: u64 = 1_767_225_600_000;

/// A map of states that drops a state at its expiry (as a TTL would).
#[derive(Debug, Default)]
struct MapStore(Mutex<HashMap<KeyDigest, State>>);

impl StateStore for MapStore {
    fn measure_and_replace<T>(
        &self,
        key: &KeyDigest,
        now_ms: u64,
        f: impl FnOnce(Option<&State>) -> (T, Option<State>),
    ) -> T {
        let mut map = self.0.lock().expect("unpoisoned");
        if map.get(key).is_some_and(|s| s.expires_at_ms() <= now_ms) {
            map.remove(key);
        }
        let (answer, new) = f(map.get(key));
        if let Some(s) = new {
            map.insert(*key, s);
        }
        answer
    }

    fn remove(&self, key: &KeyDigest) {
        self.0.lock().expect("unpoisoned").remove(key);
    }
}

/// One rule of each algorithm, 3 a second (burst 3), with or without a
/// penalty of 2 s.
fn rule(algorithm: usize, penalty: bool) -> RuleBuilder {
    let (id, s) = (format!("r{algorithm}{penalty}"), Duration::from_secs(1));
    let b = RuleBuilder::new(id).key(["ip"]);
    let b = match algorithm {
        0 => b.fixed_window(3, s),
        1 => b.sliding_window(3, s),
        2 => b.token_bucket(3, s, 3),
        3 => b.leaky_bucket(3, s, 3),
        _ => b.distinct("path", 3, s),
    };
    if penalty {
        b.penalty(Duration::from_secs(2))
    } else {
        b
    }
}

/// Subject, algorithm, penalty, mode, cost, distinct bit, time step.
type Op = (u8, usize, bool, usize, u64, u16, u64);

fn check((subject, algorithm, penalty, mode, cost, bit, _): Op) -> Check {
    let rule = Arc::new(rule(algorithm, penalty).build().expect("rule"));
    let mode = [CheckMode::Count, CheckMode::Probe, CheckMode::Charge][mode];
    let (ns, quota, p) = (namespace(&rule).into(), rule.quota(cost), rule.penalty_ms);
    let subject = HashKey::DEFAULT.digest(&[subject]);
    Check::new(rule, ns, subject, quota, p, Some(bit)).with_mode(mode)
}

fn answer(b: &impl Backend, now: u64, c: Check) -> CheckResult {
    let mut out = b
        .check_now(&Batch::new(now, vec![c]))
        .expect("answers at once");
    out.remove(0)
}

proptest! {
    #[test]
    fn step_on_a_map_decides_as_the_memory_backend(
        ops in prop::collection::vec(
            (0u8..3, 0usize..5, any::<bool>(), 0usize..3, 0u64..6, 0u16..6, 0u64..1500),
            1..120,
        ),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let (memory, map) = (MemoryBackend::default(), StoreBackend::new(MapStore::default()));
        let mut now = T0;
        for op in ops {
            now += op.6;
            let c = check(op);
            prop_assert_eq!(answer(&map, now, c.clone()), answer(&memory, now, c.clone()));
            let (a, b) = rt.block_on(async { (map.peek(&c, now).await, memory.peek(&c, now).await) });
            prop_assert_eq!(a, b);
            if op.6 % 50 == 0 {
                // Now and then a reset: both forget the subject.
                let (a, b) = rt.block_on(async { (map.reset(&c).await, memory.reset(&c).await) });
                prop_assert_eq!((a, b), (Ok(()), Ok(())));
            }
        }
    }
}
