//! What the limiter sends for rules charged after the response, against a
//! backend that records every batch and answers as told.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, CheckMode};
use crate::rules::RuleSet;
use crate::test_runtime::block_on;
use crate::{Limiter, ManualClock, Outcome, RequestAttrs};

const T0: u64 = 1_767_225_600_000;

/// Records batches; answers a `Charge` with `charged`, anything else as
/// admitted; answers at once unless `waits`.
#[derive(Debug)]
struct Recorder {
    batches: Mutex<Vec<Batch>>,
    charged: Result<Decision, BackendError>,
    waits: bool,
}

impl Recorder {
    fn new(charged: Result<Decision, BackendError>, waits: bool) -> Arc<Self> {
        Arc::new(Self {
            batches: Mutex::new(Vec::new()),
            charged,
            waits,
        })
    }

    fn answer(&self, batch: &Batch) -> Vec<Result<Decision, BackendError>> {
        self.batches.lock().unwrap().push(batch.clone());
        let answer = |mode| match mode {
            CheckMode::Charge => self.charged.clone(),
            _ => Ok(Decision::allow(9, 60_000)),
        };
        batch.checks.iter().map(|c| answer(c.mode)).collect()
    }

    fn batches(&self) -> Vec<Batch> {
        self.batches.lock().unwrap().clone()
    }
}

impl Backend for Recorder {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        Box::pin(std::future::ready(self.answer(batch)))
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<Result<Decision, BackendError>>> {
        (!self.waits).then(|| self.answer(batch))
    }
}

const RULES: &str = r#"[
    {"id": "plain", "expression": "true", "algorithm": "fixed_window", "limit": 10,
     "period": "1m", "key": ["ip"], "cost": 2},
    {"id": "tokens", "expression": "true", "algorithm": "fixed_window", "limit": 1000,
     "period": "1m", "key": ["ip"], "charge": "response"}]"#;

fn limiter(backend: Arc<Recorder>) -> Limiter {
    let rules = RuleSet::from_json_at(RULES, T0).unwrap();
    Limiter::builder(rules)
        .clock(ManualClock::new(T0))
        .backend_arc(backend)
        .build()
}

fn req() -> RequestAttrs {
    RequestAttrs::new("192.0.2.1".parse().unwrap()).with_cost(7)
}

#[test]
fn a_response_rule_is_probed_at_cost_1_in_the_request_batch() {
    let rec = Recorder::new(Ok(Decision::allow(0, 0)), false);
    let l = limiter(rec.clone());
    let v = l.check(&req()).into_ready().unwrap();
    assert!(v.is_forward() && v.ticket.charges() && v.ticket.is_empty());
    let batches = rec.batches();
    assert_eq!(batches.len(), 1, "one round trip");
    let modes: Vec<_> = batches[0]
        .checks
        .iter()
        .map(|c| (&*c.rule.id, c.mode, c.quota.cost))
        .collect();
    assert_eq!(
        modes,
        [
            ("plain", CheckMode::Count, 7),
            ("tokens", CheckMode::Probe, 1)
        ]
    );
}

#[test]
fn a_charge_is_one_batch_of_forced_checks_done_in_the_call() {
    let rec = Recorder::new(Ok(Decision::allow(0, 0)), false);
    let l = limiter(rec.clone());
    let v = l.check(&req()).into_ready().unwrap();
    assert!(l.charge(&v.ticket, 0).is_ready());
    assert_eq!(rec.batches().len(), 1, "cost 0 sends nothing");
    let f = l.charge(&v.ticket, 1200);
    assert!(f.is_ready());
    let batches = rec.batches();
    let charge = &batches[1].checks;
    assert_eq!(charge.len(), 1, "only the response rule");
    assert_eq!(
        (charge[0].mode, charge[0].quota.cost),
        (CheckMode::Charge, 1200)
    );
    assert_eq!(charge[0].state_key, batches[0].checks[1].state_key);
}

#[test]
fn a_waiting_backend_is_charged_when_the_future_is_polled() {
    let rec = Recorder::new(Ok(Decision::allow(0, 0)), true);
    let l = limiter(rec.clone());
    let v = block_on(l.check(&req()));
    let f = l.charge(&v.ticket, 5);
    assert!(!f.is_ready());
    assert_eq!(rec.batches().len(), 1);
    block_on(f);
    assert_eq!(rec.batches().len(), 2);
}

#[test]
fn a_charge_refused_by_the_backend_is_cached_as_a_cost_1_refusal() {
    let rec = Recorder::new(Ok(Decision::deny(40_000, 0, 40_000)), false);
    let l = limiter(rec.clone());
    let v = l.check(&req()).into_ready().unwrap();
    assert!(l.charge(&v.ticket, 1200).is_ready());
    let v = l.check(&req()).into_ready().unwrap();
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 40_000));
    let last = rec.batches().pop().unwrap();
    assert_eq!(last.checks.len(), 1, "tokens answered from the cache");
    assert_eq!(&*last.checks[0].rule.id, "plain");
}

#[test]
fn a_charge_the_backend_fails_is_counted_not_returned() {
    let err = BackendError::new(BackendErrorKind::Timeout, "slow");
    let rec = Recorder::new(Err(err), false);
    let l = limiter(rec.clone());
    let v = l.check(&req()).into_ready().unwrap();
    assert!(l.charge(&v.ticket, 3).is_ready());
    assert_eq!(l.stats().charge_errors.load(Ordering::Relaxed), 1);
    assert!(l.check(&req()).into_ready().unwrap().is_forward());
}

const LOG_RULES: &str = r#"[
    {"id": "tokens", "expression": "true", "algorithm": "fixed_window", "limit": 1000,
     "period": "1m", "key": ["ip"], "charge": "response", "action": "log"}]"#;

/// A log rule charged past its limit counts `would_limit` and the subject
/// on the rule's statistics, blocking nothing: answered in the call, or
/// later with a publish of the same rule in between (its statistics kept).
#[test]
fn a_log_rule_charged_over_its_limit_counts_would_limit() {
    for waits in [false, true] {
        let rec = Recorder::new(Ok(Decision::deny(40_000, 0, 40_000)), waits);
        let rules = RuleSet::from_json_at(LOG_RULES, T0).unwrap();
        let l = Limiter::builder(rules)
            .clock(ManualClock::new(T0))
            .backend_arc(rec.clone())
            .build();
        let v = block_on(l.check(&req()));
        assert!(v.is_forward() && v.ticket.charges(), "waits {waits}");
        let f = l.charge(&v.ticket, 1200);
        l.publish(RuleSet::from_json_at(LOG_RULES, T0).unwrap());
        block_on(f);
        let stats = l.rule_stats("tokens").unwrap();
        assert_eq!(stats.would_limit(), 1, "waits {waits}");
        let subject = l.subject_of("tokens", &req()).unwrap();
        assert_eq!(stats.top_limited(), [(subject, 1)], "waits {waits}");
        assert_eq!(l.penalty_cache().len(), 0, "a log rule blocks nothing");
        assert!(block_on(l.check(&req())).is_forward(), "waits {waits}");
    }
}
