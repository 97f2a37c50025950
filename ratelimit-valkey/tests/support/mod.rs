//! Shared test helpers: a server, checks built outside the core, a raw
//! connection, and the memory backend as the model.
#![allow(dead_code, unreachable_pub)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::algorithm::{Decision, Quota};
use ratelimit_core::backend::{
    namespace_digest, state_key, Backend, Batch, BoxFuture, Check, CheckResult,
};
use ratelimit_core::limiter::namespace;
use ratelimit_core::rules::{Rule, RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, KeyDigest, Limiter, RequestAttrs};
use ratelimit_valkey::testing::ValkeyServer;
use ratelimit_valkey::ValkeyBackend;

/// The conformance origin, 2026-01-01T00:00:00Z.
pub const T0: u64 = 1_767_225_600_000;

/// A server for this test, or a failure naming the install script.
pub fn server() -> ValkeyServer {
    match ValkeyServer::start() {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// A name no other test uses (rule ids, prefixes).
pub fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{tag}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// A backend with injected time and a unique prefix.
pub async fn injected(url: &str) -> ValkeyBackend {
    ValkeyBackend::builder(url)
        .key_prefix(unique("t"))
        .injected_time(true)
        .deadline(Duration::from_millis(500))
        .build()
        .await
        .expect("backend builds")
}

/// A raw multiplexed connection.
pub async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("connects")
}

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

/// One `Check` as the core builds it. `Check` is `#[non_exhaustive]` with
/// public fields: tests take one from a limiter and set its fields.
pub async fn template() -> Check {
    let rule = RuleBuilder::new("template")
        .fixed_window(1, Duration::from_secs(1))
        .key(["ip"])
        .build()
        .expect("rule");
    let set = RuleSet::from_rules(vec![rule]).expect("rule set");
    let capture = Arc::new(Capture::default());
    let limiter = Limiter::builder(set).backend_arc(capture.clone()).build();
    limiter
        .check(&RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(
            203, 0, 113, 7,
        ))))
        .await;
    let check = capture.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    check.expect("the limiter made a check")
}

/// A check of `rule` for `subject`, with `cost`.
pub fn check_of(
    template: &Check,
    rule: &Rule,
    subject: &str,
    cost: u64,
    bit: Option<u16>,
) -> Check {
    let mut c = template.clone();
    let ns: Arc<str> = namespace(rule).into();
    c.subject = HashKey::DEFAULT.digest(subject.as_bytes());
    c.state_key = state_key(&ns, &c.subject);
    c.namespace_digest = namespace_digest(&ns);
    c.namespace = ns;
    c.quota = rule.quota(cost);
    c.penalty_ms = rule.penalty_ms;
    c.bit = bit;
    c.rule = Arc::new(rule.clone());
    c
}

/// The quota of a check.
pub fn quota(c: &Check) -> Quota {
    c.quota
}

/// A digest for a name.
pub fn digest(s: &str) -> KeyDigest {
    HashKey::DEFAULT.digest(s.as_bytes())
}

/// One check at `now`, answered by `backend`.
pub async fn one(backend: &impl Backend, check: &Check, now: u64) -> CheckResult {
    let batch = Batch::new(now, vec![check.clone()]);
    let mut out = backend.check(&batch).await;
    assert_eq!(out.len(), 1);
    out.remove(0)
}

/// `INFO commandstats` field `field` of `cmd` (e.g. `evalsha`, `calls`).
pub async fn stat(conn: &mut redis::aio::MultiplexedConnection, cmd: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .expect("info");
    let prefix = format!("cmdstat_{cmd}:");
    let Some(line) = info.lines().find_map(|l| l.strip_prefix(&prefix)) else {
        return 0;
    };
    line.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Calls of `cmd` the server received (NOSCRIPT replies included).
pub async fn calls(conn: &mut redis::aio::MultiplexedConnection, cmd: &str) -> u64 {
    stat(conn, cmd, "calls").await
}

/// Calls of `cmd` that ran (calls less failed ones, such as NOSCRIPT).
pub async fn ran(conn: &mut redis::aio::MultiplexedConnection, cmd: &str) -> u64 {
    calls(conn, cmd).await - stat(conn, cmd, "failed_calls").await
}
