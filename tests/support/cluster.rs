//! A fleet of limiters on a Valkey Cluster under load, for the tests of a
//! cluster changing (slots moving, a replica promoted): the subjects, the
//! clients, and what Valkey holds for each subject afterwards.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::backend::{subject, Backend, BackendErrorKind, Check, KeyOutcome};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, KeyDigest, Limiter, RequestAttrs};
use ratelimit_testkit::valkey::{cmdstat, errors, info, ValkeyCluster};
use ratelimit_valkey::{cluster, ValkeyBackend};

use super::load::{ask, latencies, Answer};
use super::record::{Log, Sample};
use super::{unique, wall_ms, Rng};

/// The `count` rule's bucket: it never limits, so every admission it
/// answered must be in Valkey: consumed tokens = admissions, exactly.
pub const COUNT_BURST: u64 = 1_000_000;

/// The paths the clients send to, one per rule.
pub const PATHS: [&str; 3] = ["/count", "/limit", "/window"];

/// The rules' ids, as [`PATHS`].
pub const RULES: [&str; 3] = ["count", "limit", "window"];

/// `count` (never limits, fail open) and `limit` (`limit` per day, fail
/// closed), both token buckets, and `window` (a fixed window of `limit` per
/// day, fail closed), all keyed on the address, so one subject lives in one
/// slot for all. Refill over a test (under a minute) is below one token.
pub fn rules(limit: u64) -> RuleSet {
    RuleSet::from_json(&format!(
        r#"[
  {{"id": "count", "expression": "http.request.uri.path eq \"/count\"",
   "algorithm": "token_bucket", "limit": 1, "burst": {COUNT_BURST}, "period": "24h",
   "key": ["ip"], "fail_mode": "open"}},
  {{"id": "limit", "expression": "http.request.uri.path eq \"/limit\"",
   "algorithm": "token_bucket", "limit": {limit}, "burst": {limit}, "period": "24h",
   "key": ["ip"], "fail_mode": "closed"}},
  {{"id": "window", "expression": "http.request.uri.path eq \"/window\"",
   "algorithm": "fixed_window", "limit": {limit}, "period": "24h",
   "key": ["ip"], "fail_mode": "closed"}}
]"#
    ))
    .expect("rules")
}

/// The check of `rule` for subject `who` (cost 1), as the limiter builds it.
pub fn check_for(rules: &RuleSet, rule: &str, who: IpAddr) -> Check {
    let rule = rules.get(rule).expect("rule");
    let KeyOutcome::Subject(d) = subject(rule, &RequestAttrs::new(who), &HashKey::DEFAULT, false)
    else {
        panic!("no subject for {who}");
    };
    Check::new(
        rule.clone(),
        ratelimit_core::backend::Check::namespace_of(rule).into(),
        d,
        rule.quota(1),
        None,
        None,
    )
}

/// The digest of `who`'s subject.
pub fn digest(rules: &RuleSet, who: IpAddr) -> KeyDigest {
    check_for(rules, "count", who).subject
}

/// The hash slot of `who`'s keys (both rules).
pub fn slot_of(rules: &RuleSet, who: IpAddr) -> u16 {
    let c = check_for(rules, "count", who);
    cluster::slot(ratelimit_valkey::key_of("rl:", &c).as_bytes())
}

/// `per_node` subjects on each of the first `primaries` nodes (initial
/// layout), from `198.18.<net>.0` up.
pub fn subjects(rules: &RuleSet, c: &ValkeyCluster, net: u8, per_node: usize) -> Vec<IpAddr> {
    let mut by_node = vec![Vec::new(); c.primaries()];
    for k in 0..=255u8 {
        let who = IpAddr::from([198, 18, net, k]);
        let node = c.node_of_slot(slot_of(rules, who));
        if by_node[node].len() < per_node {
            by_node[node].push(who);
        }
    }
    assert!(by_node.iter().all(|v| v.len() == per_node), "{by_node:?}");
    by_node.concat()
}

/// Waits, within a minute of midnight UTC, until it has passed: the
/// `window` rule counts per calendar day, and a test must not span two.
pub async fn clear_of_midnight() {
    const DAY: u64 = 86_400_000;
    let left = DAY - wall_ms() % DAY;
    if left < 60_000 {
        tokio::time::sleep(Duration::from_millis(left + 100)).await;
    }
}

/// Limiters on cluster backends (every node a seed), recording into one log.
pub struct Fleet {
    pub limiters: Vec<Limiter>,
    /// Instance 0's backend, to read the subjects' state afterwards.
    pub backend: ValkeyBackend,
    pub log: Log,
}

pub async fn fleet(c: &ValkeyCluster, rules: &RuleSet, n: usize, deadline: Duration) -> Fleet {
    let log = Log::new();
    let prefix = unique("chg");
    let mut limiters = Vec::new();
    let mut first = None;
    for i in 0..n {
        let backend = ValkeyBackend::builder(c.url(0))
            .cluster(true)
            .cluster_seeds(c.urls())
            .key_prefix(&prefix)
            .deadline(deadline)
            .require_connection(true)
            .build()
            .await
            .expect("cluster backend");
        first.get_or_insert_with(|| backend.clone());
        limiters.push(log.limiter(rules.clone(), backend, i, n as u64));
    }
    Fleet {
        limiters,
        backend: first.expect("one instance"),
        log,
    }
}

/// Clients sending to random subjects and paths until stopped.
pub struct Clients {
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    tasks: tokio::task::JoinSet<()>,
}

impl Clients {
    /// `clients` per limiter, each pausing 1 to `pause_ms` ms between requests.
    pub fn start(limiters: &[Limiter], clients: usize, who: &[IpAddr], pause_ms: u64) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, limiter) in limiters.iter().enumerate() {
            for c in 0..clients {
                let (limiter, stop, answers) = (limiter.clone(), stop.clone(), answers.clone());
                let who = who.to_vec();
                let mut rng = Rng::new((i * clients + c) as u64 + 7);
                tasks.spawn(async move {
                    while !stop.load(Ordering::SeqCst) {
                        let ip = who[rng.below(who.len() as u64) as usize];
                        let path = PATHS[rng.below(PATHS.len() as u64) as usize];
                        let a = ask(&limiter, i, path, ip).await;
                        answers.lock().unwrap_or_else(|e| e.into_inner()).push(a);
                        let pause = 1 + rng.below(pause_ms.max(1));
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                    }
                });
            }
        }
        Self {
            stop,
            answers,
            tasks,
        }
    }

    /// Stops the clients and returns every answer.
    pub async fn stop(mut self) -> Vec<Answer> {
        self.stop.store(true, Ordering::SeqCst);
        while let Some(r) = self.tasks.join_next().await {
            r.expect("a client task panicked");
        }
        let out = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        out.clone()
    }
}

/// What `rule` has counted for `who` in Valkey now: tokens taken from the
/// bucket, or the window's count (full quota less `remaining`).
pub async fn consumed(backend: &ValkeyBackend, rules: &RuleSet, rule: &str, who: IpAddr) -> u64 {
    let check = check_for(rules, rule, who);
    let full = match rule {
        "count" => COUNT_BURST,
        "window" => check.quota.limit,
        _ => check.quota.burst,
    };
    let d = backend
        .peek(&check, wall_ms())
        .await
        .unwrap_or_else(|e| panic!("peek {rule} {who}: {e}"));
    full - d.remaining
}

/// `MOVED` and `ASK` replies the nodes `urls` sent (`INFO errorstats`).
pub async fn redirects(urls: &[String]) -> (u64, u64) {
    let (mut moved, mut asked) = (0, 0);
    for url in urls {
        moved += errors(url, "MOVED").await;
        asked += errors(url, "ASK").await;
    }
    (moved, asked)
}

/// Scripts the nodes `urls` ran (`EVALSHA` calls less failed ones).
pub async fn scripts_run(urls: &[String]) -> u64 {
    let mut n = 0;
    for url in urls {
        let i = info(url, "commandstats").await;
        n += cmdstat(&i, "evalsha", "calls") - cmdstat(&i, "evalsha", "failed_calls");
    }
    n
}

/// Every answer within `deadline` + `slack_ms`; returns (max, p99) in ms.
pub fn assert_latency(
    what: &str,
    answers: &[Answer],
    deadline: Duration,
    slack_ms: u64,
) -> (u64, u64) {
    let bound = deadline.as_millis() as u64 + slack_ms;
    let l = latencies(answers);
    let late = answers
        .iter()
        .filter(|a| a.latency_us.div_ceil(1000) > bound)
        .count();
    assert_eq!(
        late,
        0,
        "{what}: {late} of {} answers took over {bound} ms (max {} ms)",
        answers.len(),
        l.max()
    );
    (l.max(), l.quantile(0.99))
}

/// Per subject and rule: admissions the instances got, and failures.
pub fn tally(samples: &[Sample], rule: &str, who: KeyDigest) -> (u64, u64) {
    let mine = samples
        .iter()
        .filter(|s| &*s.rule == rule && s.subject == who);
    let (mut admitted, mut failed) = (0, 0);
    for s in mine {
        admitted += u64::from(s.admitted());
        failed += u64::from(s.failed());
    }
    (admitted, failed)
}

/// A check that got no answer within the deadline: the machine was busy
/// (it may have counted; it was not sent again).
pub fn timed_out(s: &Sample) -> bool {
    s.result == Err(BackendErrorKind::Timeout)
}

/// Failures other than time-outs and an open breaker (which opens after
/// consecutive time-outs on a busy machine, or after failures that count
/// here): what a change of the cluster caused.
pub fn broken(s: &Sample) -> bool {
    s.failed() && !timed_out(s) && s.result != Err(BackendErrorKind::BreakerOpen)
}

/// Checks that timed out or met an open breaker: the machine was busy.
pub fn busy(samples: &[Sample]) -> usize {
    samples.iter().filter(|s| s.failed() && !broken(s)).count()
}
