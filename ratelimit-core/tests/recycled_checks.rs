//! A thread reuses the checks of its last batch (their rules' `Arc`s
//! included) for the next request: the backend must still see, in every
//! check, the rule the request is decided under, never another limiter's
//! or one a publish replaced.

mod support;

use std::sync::{Arc, Mutex};

use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, BoxFuture, CheckResult};
use ratelimit_core::{HashKey, Limiter, ManualClock, Outcome};
use support::{req, rules, T0};

/// The in-memory store, recording the limit of each check's rule.
#[derive(Debug, Default)]
struct Seen {
    memory: MemoryBackend,
    limits: Mutex<Vec<u64>>,
}

impl Seen {
    fn record(&self, batch: &Batch) {
        let mut limits = self.limits.lock().expect("lock");
        limits.extend(batch.checks.iter().map(|c| c.quota.limit));
    }

    fn take(&self) -> Vec<u64> {
        std::mem::take(&mut *self.limits.lock().expect("lock"))
    }
}

impl Backend for Seen {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        self.record(batch);
        self.memory.check(batch)
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<CheckResult>> {
        self.record(batch);
        Some(self.memory.check_now(batch))
    }

    fn hash_key(&self) -> Option<HashKey> {
        self.memory.hash_key()
    }
}

fn per_ip(limit: u32) -> String {
    format!(
        r#"[{{"id": "api", "expression": "true", "algorithm": "fixed_window",
             "limit": {limit}, "period": "1m", "key": ["ip"]}}]"#
    )
}

fn limiter(limit: u32) -> (Limiter, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let l = Limiter::builder(rules(&per_ip(limit)))
        .clock(ManualClock::new(T0))
        .backend(seen.clone())
        .build();
    (l, seen)
}

fn outcome(l: &Limiter) -> Outcome {
    let r = req("192.0.2.1", "/");
    l.check(&r).into_ready().expect("ready").outcome
}

#[test]
fn two_limiters_on_one_thread_keep_their_own_rules() {
    let (one, seen_one) = limiter(1);
    let (three, seen_three) = limiter(3);
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        outcomes.push((outcome(&one), outcome(&three)));
    }
    use Outcome::{Forward, Limited};
    assert_eq!(
        outcomes,
        [(Forward, Forward), (Limited, Forward), (Limited, Forward)]
    );
    // The third refusal comes from the over-limit cache, not the backend.
    assert_eq!(seen_one.take(), [1, 1]);
    assert_eq!(seen_three.take(), [3, 3, 3]);
}

#[test]
fn a_published_rule_replaces_the_recycled_one() {
    let (l, seen) = limiter(1);
    assert_eq!(outcome(&l), Outcome::Forward);
    assert_eq!(outcome(&l), Outcome::Limited);
    // Same id, algorithm and period: the count is kept, the limit is new.
    l.publish(rules(&per_ip(3)));
    assert_eq!(outcome(&l), Outcome::Forward);
    assert_eq!(outcome(&l), Outcome::Forward);
    assert_eq!(outcome(&l), Outcome::Limited);
    assert_eq!(seen.take(), [1, 1, 3, 3, 3]);
}

/// The in-memory store, deciding a request on another limiter while it
/// answers: the thread's batch is in use then, and the inner decision
/// must plan into one of its own without disturbing the outer one.
#[derive(Debug)]
struct Nested {
    memory: MemoryBackend,
    inner: Limiter,
    inner_outcomes: Mutex<Vec<Outcome>>,
}

impl Backend for Nested {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        self.memory.check(batch)
    }

    fn check_now_each(&self, batch: &Batch, answer: &mut dyn FnMut(CheckResult)) -> bool {
        let o = outcome(&self.inner);
        self.inner_outcomes.lock().expect("lock").push(o);
        self.memory.check_now_each(batch, answer)
    }

    fn hash_key(&self) -> Option<HashKey> {
        self.memory.hash_key()
    }
}

#[test]
fn a_backend_may_decide_another_request_while_it_answers() {
    let inner = limiter(2).0;
    let nested = Arc::new(Nested {
        memory: MemoryBackend::default(),
        inner,
        inner_outcomes: Mutex::default(),
    });
    let outer = Limiter::builder(rules(&per_ip(1)))
        .clock(ManualClock::new(T0))
        .backend(nested.clone())
        .build();
    use Outcome::{Forward, Limited};
    assert_eq!(outcome(&outer), Forward);
    assert_eq!(outcome(&outer), Limited);
    // The outer limiter's rules and counts, then its own again: the
    // inner decision (limit 2) left the outer batch alone.
    assert_eq!(outcome(&outer), Limited);
    let inner = nested.inner_outcomes.lock().expect("lock").clone();
    assert_eq!(inner, [Forward, Forward]);
}
