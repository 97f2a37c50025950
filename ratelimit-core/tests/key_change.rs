//! When the backend's hash key changes (the Valkey backend adopting the key
//! stored in Valkey after a restart, issue 27), the limiter drops what it
//! holds in memory under the old key, and keyed handles made before the
//! change hash with the new key.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check};
use ratelimit_core::keyed::Quota;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, Limiter, ManualClock, Outcome, RequestAttrs};

const T0: u64 = 1_767_225_600_000;
const OLD: HashKey = HashKey::new([1; 16]);
const NEW: HashKey = HashKey::new([2; 16]);

/// The memory backend under a hash key the test replaces; down on demand.
#[derive(Debug)]
struct Rekeyed {
    memory: MemoryBackend,
    key: Mutex<HashKey>,
    down: AtomicBool,
}

impl Rekeyed {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            memory: MemoryBackend::default(),
            key: Mutex::new(OLD),
            down: AtomicBool::new(false),
        })
    }

    fn set_key(&self, key: HashKey) {
        *self.key.lock().expect("key") = key;
    }
}

impl Backend for Rekeyed {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        if self.down.load(Ordering::SeqCst) {
            let e = BackendError::new(BackendErrorKind::Connection, "down");
            return Box::pin(std::future::ready(vec![Err(e); batch.checks.len()]));
        }
        self.memory.check(batch)
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        self.memory.peek(check, now_ms)
    }

    fn hash_key(&self) -> Option<HashKey> {
        Some(*self.key.lock().expect("key"))
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn limiter(json: &str, backend: &Arc<Rekeyed>, capacity: usize) -> Limiter {
    Limiter::builder(RuleSet::from_json_at(json, T0).expect("rules"))
        .clock(ManualClock::new(T0))
        .backend(backend.clone())
        .penalty_cache_capacity(capacity)
        .overlimit_cache_capacity(capacity)
        .local_capacity(capacity)
        .build()
}

fn req(ip: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().expect("ip"))
}

#[test]
fn a_new_key_empties_the_penalty_cache() {
    let backend = Rekeyed::new();
    let l = limiter(
        r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window", "limit": 1, "period": "1m",
            "key": ["ip"], "penalty": "5m"}]"#,
        &backend,
        100,
    );
    block_on(async {
        assert!(l.check(&req("203.0.113.7")).await.is_forward());
        assert_eq!(l.check(&req("203.0.113.7")).await.outcome, Outcome::Limited);
        assert_eq!(l.penalty_cache().len(), 1, "the penalty is cached");
        backend.set_key(NEW);
        assert!(l.check(&req("203.0.113.8")).await.is_forward());
        assert_eq!(
            l.penalty_cache().len(),
            0,
            "the block kept under the old key is dropped"
        );
    });
}

#[test]
fn a_new_key_frees_the_over_limit_cache() {
    let backend = Rekeyed::new();
    // A cache of one refusal: a second subject's refusal is dropped (and
    // counted) while the first one's is held.
    let l = limiter(
        r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window", "limit": 1, "period": "1m",
            "key": ["ip"]}]"#,
        &backend,
        1,
    );
    block_on(async {
        for _ in 0..2 {
            l.check(&req("203.0.113.7")).await;
        }
        assert_eq!(l.overlimit_cache_dropped(), 0, "one refusal held");
        backend.set_key(NEW);
        for _ in 0..2 {
            l.check(&req("203.0.113.8")).await;
        }
        assert_eq!(
            l.overlimit_cache_dropped(),
            0,
            "the refusal held under the old key was dropped, so the new one fits"
        );
    });
}

#[test]
fn a_new_key_frees_the_local_store() {
    let backend = Rekeyed::new();
    let l = limiter(
        r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window", "limit": 10, "period": "1m",
            "key": ["ip"], "fail_mode": "local"}]"#,
        &backend,
        1,
    );
    backend.down.store(true, Ordering::SeqCst);
    block_on(async {
        assert!(l.check(&req("203.0.113.7")).await.is_forward());
        assert_eq!(l.local_untracked(), 0, "counted locally");
        backend.set_key(NEW);
        assert!(l.check(&req("203.0.113.8")).await.is_forward());
        assert_eq!(
            l.local_untracked(),
            0,
            "the count kept under the old key was dropped, so the new subject fits"
        );
    });
}

#[test]
fn a_keyed_handle_made_before_the_change_hashes_with_the_new_key() {
    let backend = Rekeyed::new();
    let l = limiter("[]", &backend, 100);
    let quota = Quota::per_minute(NonZeroU32::new(5).expect("non-zero"));
    let handle = l.keyed_quota("partner", quota);
    let under = |key: HashKey| {
        Limiter::builder(RuleSet::from_json("[]").expect("rules"))
            .hash_key(key)
            .build()
            .keyed_quota("partner", quota)
            .subject(&"tenant-42")
    };
    assert_eq!(handle.subject(&"tenant-42"), under(OLD));
    backend.set_key(NEW);
    assert_eq!(
        handle.subject(&"tenant-42"),
        under(NEW),
        "the handle follows the limiter's key"
    );
}

/// A backend that counts the limiter's asks for its key, fixed or not.
#[derive(Debug)]
struct Counted {
    memory: MemoryBackend,
    fixed: bool,
    asked: std::sync::atomic::AtomicUsize,
}

impl Backend for Counted {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        self.memory.check(batch)
    }

    fn hash_key(&self) -> Option<HashKey> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Some(OLD)
    }

    fn hash_key_changes(&self) -> bool {
        !self.fixed
    }
}

/// Asks made by building a limiter over a backend (`fixed` or not) and
/// deciding 50 requests, and the subject it gave.
fn asks(fixed: bool) -> (usize, ratelimit_core::KeyDigest) {
    let backend = Arc::new(Counted {
        memory: MemoryBackend::default(),
        fixed,
        asked: Default::default(),
    });
    let rules = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 100, "period": "1m", "key": ["ip"]}]"#;
    let l = Limiter::builder(RuleSet::from_json_at(rules, T0).expect("rules"))
        .clock(ManualClock::new(T0))
        .backend(backend.clone())
        .build();
    block_on(async {
        for _ in 0..50 {
            assert!(l.check(&req("203.0.113.7")).await.is_forward());
        }
    });
    let subject = l.subject_of("api", &req("203.0.113.7")).expect("subject");
    (backend.asked.load(Ordering::SeqCst), subject)
}

#[test]
fn a_fixed_key_is_read_once_and_a_changing_one_at_each_decision() {
    let (fixed, fixed_subject) = asks(true);
    let (changing, changing_subject) = asks(false);
    assert!(fixed <= 2, "read when built, never per decision: {fixed}");
    assert!(changing >= 50, "read at each decision: {changing}");
    assert_eq!(fixed_subject, changing_subject, "the same key either way");
}
