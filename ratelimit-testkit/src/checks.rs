//! Backend checks built outside the limiter, for tests that drive a
//! [`Backend`] directly.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::algorithm::{CheckQuota, Decision};
use ratelimit_core::backend::namespace;
use ratelimit_core::backend::{Backend, Batch, BoxFuture, Check, CheckResult};
use ratelimit_core::rules::{Rule, RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, KeyDigest, Limiter, RequestAttrs};

/// The conformance origin, 2026-01-01T00:00:00Z, in Unix ms.
pub const T0: u64 = 1_767_225_600_000;

#[derive(Debug, Default)]
struct Capture(Mutex<Option<Check>>);

impl Backend for Capture {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *slot = batch.checks.first().cloned();
        let out = vec![Ok(Decision::allow(0, 0)); batch.checks.len()];
        Box::pin(std::future::ready(out))
    }
}

/// One `Check` as the core builds it: tests take one from a limiter and
/// set its public fields ([`check_of`]).
///
/// # Panics
///
/// Never for the fixed rule it uses.
pub async fn template() -> Check {
    let set = RuleSet::from_rules(vec![template_rule()]).expect("rule set");
    let capture = Arc::new(Capture::default());
    // The public test key, so that subjects are the same in every run.
    let limiter = Limiter::builder(set)
        .backend_arc(capture.clone())
        .hash_key(HashKey::DEFAULT)
        .build();
    limiter
        .check(&RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(
            203, 0, 113, 7,
        ))))
        .await;
    let check = capture.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    check.expect("the limiter made a check")
}

/// The rule of [`template`]'s check: `template`, a fixed window of 1 a
/// second keyed on the IP.
///
/// # Panics
///
/// Never: the rule is valid.
pub fn template_rule() -> Rule {
    RuleBuilder::new("template")
        .fixed_window(1, Duration::from_secs(1))
        .key(["ip"])
        .build()
        .expect("rule")
}

/// A check of `rule` for `subject`, with `cost` and the distinct `bit`.
pub fn check_of(
    template: &Check,
    rule: &Rule,
    subject: &str,
    cost: u64,
    bit: Option<u16>,
) -> Check {
    let ns: Arc<str> = namespace(rule).into();
    let subject = HashKey::DEFAULT.digest(subject.as_bytes());
    let (quota, penalty_ms) = (rule.quota(cost), rule.penalty_ms);
    let c = Check::new(Arc::new(rule.clone()), ns, subject, quota, penalty_ms, bit);
    c.with_mode(template.mode)
}

/// The quota of a check.
pub fn quota(c: &Check) -> CheckQuota {
    c.quota
}

/// The digest of a name, under [`HashKey::DEFAULT`].
pub fn digest(s: &str) -> KeyDigest {
    HashKey::DEFAULT.digest(s.as_bytes())
}

/// One check at `now`, answered by `backend`.
///
/// # Panics
///
/// When the backend answers with other than one result.
pub async fn one(backend: &impl Backend, check: &Check, now: u64) -> CheckResult {
    let batch = Batch::new(now, vec![check.clone()]);
    let mut out = backend.check(&batch).await;
    assert_eq!(out.len(), 1);
    out.remove(0)
}
