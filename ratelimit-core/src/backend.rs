//! The backend seam: one batch with all of a request's checks, answered at
//! once. The in-memory store implements it in process; the Valkey backend
//! implements it with one pipelined round trip.
//!
//! # Writing a backend
//!
//! A backend that keeps states (a map, an embedded database, shared
//! memory) needs no algorithm of its own:
//!
//! 1. implement [`StateStore`] on your store: `measure_and_replace` runs a
//!    function on one key's [`State`] and keeps what it returns, under the
//!    key's lock; `remove` forgets a key;
//! 2. wrap it in a [`StoreBackend`], which is a [`Backend`]: every check
//!    is [`State::step`] on its subject's state (the five algorithms, counting,
//!    probing and charging, the penalty), `peek` and `reset` included;
//! 3. give it to the limiter (`Limiter::builder(rules).backend(...)`), and
//!    run the backend-generic suite on it (`ratelimit_testkit::scenarios!`).
//!
//! `ratelimit-core/tests/hashmap_backend.rs` is such a backend, over a
//! `Mutex<HashMap>`, in under 70 lines, and passes the whole suite. A state
//! past its [`expires_at_ms`](State::expires_at_ms) answers as none: a
//! store may drop it then (a TTL). The in-memory backend is a
//! [`StoreBackend`] too, over packed states.
//!
//! A store outside the process (a database, a key-value service over the
//! network) keeps each state as bytes ([`State::encode`], a documented,
//! versioned format) and implements [`RemoteStore`]: an async read of a
//! key's bytes and version, and a compare-and-set write. A
//! [`RemoteBackend`] over it reads, runs [`State::step`] and writes back,
//! reading again when another writer came first: the same algorithms,
//! awaited. `ratelimit-core/tests/remote_backend.rs` is one over a map
//! that awaits between read and write, and passes the whole suite.
//!
//! A backend that computes the algorithms elsewhere (the Valkey backend
//! runs Lua scripts next to the data, one round trip a request)
//! implements [`Backend`] itself, and reads what a check needs from the
//! [`Check`]: its algorithm, quota, penalty, bit and mode.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use crate::algorithm::CheckMode;
use crate::algorithm::{Algorithm, CheckQuota, Decision};
use crate::rules::Rule;
pub use crate::store::{RemoteBackend, RemoteStore, Stored, REMOTE_TRIES};
pub use crate::store::{State, StateDecodeError, StateStore, StoreBackend};
use crate::KeyDigest;

pub use crate::store::MemoryBackend;
// The subject digest a rule gives a request under a known hash key: the
// oracle of the workspace's tests that cross-check stored keys (a limiter's
// own is `Limiter::subject_of`).
pub(crate) use crate::state_address::state_key_with;
#[doc(hidden)]
pub use crate::subject::{subject, KeyOutcome};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One rule's check of one subject: everything a backend reads to answer
/// it (the algorithm, the quota, the penalty, the distinct bit, the mode,
/// where the state lives), so that a backend never looks into the rule.
/// A store of states answers it with [`State::step`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Check {
    /// The rule, for the limiter's own bookkeeping (fail mode, caches):
    /// backends read the fields below and [`Check::rule_id`].
    pub(crate) rule: Arc<Rule>,
    /// The rule's algorithm.
    pub algorithm: Algorithm,
    /// Where the subject's state lives: the rule's id, algorithm, period and
    /// `distinct_of`, so that changing any of them starts fresh.
    pub namespace: Arc<str>,
    /// The digest of `namespace` (see [`Check::namespace_digest_of`]), computed once
    /// per published rule: backends that name a rule version's storage
    /// (the Valkey keys) take it from here instead of hashing per check.
    pub namespace_digest: KeyDigest,
    /// The subject (the digest of its key).
    pub subject: KeyDigest,
    /// The digest of (namespace, subject): where this subject of this rule
    /// version is stored, see [`Check::state_key_of`].
    pub state_key: KeyDigest,
    /// The numbers, with this request's cost.
    pub quota: CheckQuota,
    /// The penalty to start when over the limit (`None` for log rules).
    pub penalty_ms: Option<u64>,
    /// The distinct value's bit (distinct rules only).
    pub bit: Option<u16>,
    /// What the check does: count the request (the default), only ask
    /// whether the budget is spent, or charge a cost known after the
    /// response.
    pub mode: CheckMode,
}

impl Check {
    /// A check of `subject` under `rule`, its state stored under
    /// `namespace` (see [`Check::namespace_of`]). Hashes the
    /// namespace; the limiter fills in the digests it derived when the rule
    /// set was published instead.
    pub fn new(
        rule: Arc<Rule>,
        namespace: Arc<str>,
        subject: KeyDigest,
        quota: CheckQuota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
    ) -> Self {
        let state_key = Self::state_key_of(&namespace, &subject);
        Self {
            algorithm: rule.algorithm,
            rule,
            namespace_digest: Self::namespace_digest_of(&namespace),
            namespace,
            subject,
            state_key,
            quota,
            penalty_ms,
            bit,
            mode: CheckMode::Count,
        }
    }

    /// The rule's id, for messages (`rule login: ...`).
    pub fn rule_id(&self) -> &str {
        &self.rule.id
    }

    /// The same check in `mode`.
    #[must_use]
    pub fn with_mode(mut self, mode: CheckMode) -> Self {
        self.mode = mode;
        self
    }

    /// The namespace of a rule's state: its id, algorithm, period and
    /// `distinct_of`, so that changing any of them starts fresh. With
    /// [`Check::new`] and [`Check::state_key_of`], what a backend or a tool needs to
    /// build a check by hand or find a subject's stored state.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::backend::Check;
    /// use ratelimit_core::rules::RuleBuilder;
    /// use std::time::Duration;
    ///
    /// let rule = RuleBuilder::new("login")
    ///     .sliding_window(5, Duration::from_secs(60))
    ///     .key(["ip"])
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(Check::namespace_of(&rule), "login:sw:60");
    /// ```
    pub fn namespace_of(rule: &Rule) -> String {
        let mut ns = format!(
            "{}:{}:{}",
            rule.id,
            rule.algorithm.tag(),
            rule.period_ms / 1000
        );
        if let Some(d) = &rule.distinct_of {
            ns.push(':');
            ns.push_str(&d.to_string());
        }
        ns
    }

    /// The digest naming a namespace's storage in a shared backend (computed
    /// once per published rule).
    pub fn namespace_digest_of(namespace: &str) -> KeyDigest {
        crate::state_address::namespace_digest(namespace)
    }

    /// The key of (namespace, subject): one subject of one rule version.
    ///
    /// Where its state lives in this process (the in-memory store, the
    /// penalty cache, the over-limit cache, the local fallback store);
    /// shared backends name their keys after
    /// [`namespace_digest_of`](Check::namespace_digest_of) and the subject
    /// instead, so a state key never leaves the process and may change
    /// between versions.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::backend::Check;
    /// use ratelimit_core::HashKey;
    ///
    /// let subject = HashKey::random().digest(b"203.0.113.7");
    /// assert_ne!(
    ///     Check::state_key_of("login:sw:60", &subject),
    ///     Check::state_key_of("api:sw:60", &subject)
    /// );
    /// ```
    pub fn state_key_of(namespace: &str, subject: &KeyDigest) -> KeyDigest {
        crate::state_address::state_key(namespace, subject)
    }
}

/// All of a request's checks.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Batch {
    /// The limiter's time (Unix ms). Backends with a clock of their own
    /// (Valkey `TIME`) may use theirs instead.
    pub now_ms: u64,
    /// The checks, in order.
    pub checks: Vec<Check>,
}

impl Batch {
    /// A batch at `now_ms`.
    pub fn new(now_ms: u64, checks: Vec<Check>) -> Self {
        Self { now_ms, checks }
    }
}

/// Why a backend could not answer a check.
///
/// `{:?}` is the `Display` form (`timed out: ...`), so that an error
/// returned from `main` with `?` prints as a sentence; `{:#?}` shows the
/// fields, and [`BackendError::kind`] gives the kind.
#[derive(Clone, PartialEq, Eq)]
pub struct BackendError {
    kind: BackendErrorKind,
    detail: String,
}

/// The kind of a [`BackendError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendErrorKind {
    /// The call did not finish before its deadline.
    Timeout,
    /// The connection failed or was lost.
    Connection,
    /// The node's circuit breaker is open: it was not called.
    BreakerOpen,
    /// The reply made no sense.
    Protocol,
    /// The backend does not offer this operation.
    Unsupported,
}

impl BackendError {
    /// An error of `kind`.
    pub fn new(kind: BackendErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }

    /// The kind.
    pub fn kind(&self) -> BackendErrorKind {
        self.kind
    }

    /// Whether the call timed out (it may still have counted).
    pub fn is_timeout(&self) -> bool {
        self.kind == BackendErrorKind::Timeout
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            BackendErrorKind::Timeout => "timed out",
            BackendErrorKind::Connection => "connection failed",
            BackendErrorKind::BreakerOpen => "circuit breaker open",
            BackendErrorKind::Protocol => "bad reply",
            BackendErrorKind::Unsupported => "not supported by this backend",
        };
        if self.detail.is_empty() {
            f.write_str(kind)
        } else {
            write!(f, "{kind}: {}", self.detail)
        }
    }
}

/// The `Display` form; `{:#?}` the fields.
impl fmt::Debug for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        f.debug_struct("BackendError")
            .field("kind", &self.kind)
            .field("detail", &self.detail)
            .finish()
    }
}

impl std::error::Error for BackendError {}

/// Where rules keep their shared state.
pub trait Backend: fmt::Debug + Send + Sync + 'static {
    /// Answers every check of `batch`, in order, in one go. A check the
    /// backend could not answer is an `Err`; the others still count.
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>>;

    /// Answers `batch` at once, without waiting, when this backend can (it
    /// does no I/O, as the in-memory store): the same answers
    /// [`Backend::check`] would give, and the limiter then does not call
    /// `check` for this batch. `None` (the default, for backends that
    /// wait on the network): nothing was counted, call `check`.
    ///
    /// This lets the limiter decide a request without boxing a future or
    /// going through an async state: the request path of an in-process
    /// backend stays synchronous.
    fn check_now(&self, batch: &Batch) -> Option<Vec<Result<Decision, BackendError>>> {
        let _ = batch;
        None
    }

    /// [`Backend::check_now`] handing each answer, in order, to `answer`
    /// instead of collecting them in a `Vec`: the limiter keeps them on the
    /// stack. Returns `false`, having counted nothing and called `answer`
    /// never, when the backend cannot answer at once.
    ///
    /// `answer` applies the answer to the verdict at once (the limiter's
    /// penalty cache, statistics): call it holding none of the backend's
    /// own locks.
    ///
    /// The default calls [`Backend::check_now`]; a backend that answers at
    /// once overrides this too to save the `Vec`.
    fn check_now_each(
        &self,
        batch: &Batch,
        answer: &mut dyn FnMut(Result<Decision, BackendError>),
    ) -> bool {
        match self.check_now(batch) {
            Some(answers) => {
                answers.into_iter().for_each(answer);
                true
            }
            None => false,
        }
    }

    /// Reads a subject's state at `now_ms` without counting: remaining,
    /// reset time and the end of a penalty (`blocked_until_ms`).
    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        let _ = (check, now_ms);
        Box::pin(std::future::ready(Err(unsupported())))
    }

    /// Forgets a subject's state, penalty included.
    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        let _ = check;
        Box::pin(std::future::ready(Err(unsupported())))
    }

    /// The secret hash key shared by every instance of the fleet, once the
    /// backend knows it. Subjects and distinct values are hashed with it,
    /// so it decides where every state lives: a backend whose state is
    /// shared between processes must return the same key in all of them
    /// (the Valkey backend keeps one in Valkey).
    ///
    /// The in-memory backend returns a random key of its own. `None` (the
    /// default): the limiter hashes with a random key of its own
    /// ([`HashKey::random`](crate::HashKey::random)), which suits state
    /// kept for one limiter only. A backend that shares state but does not
    /// know its key yet returns `None` and refuses checks until it does.
    ///
    /// The key may change (the Valkey backend adopts the key stored in
    /// Valkey when it differs from its own): the limiter then drops the
    /// subjects it holds in memory under the old key (penalty cache,
    /// over-limit cache, local stores) at its next decision.
    fn hash_key(&self) -> Option<crate::HashKey> {
        None
    }

    /// Whether [`Backend::hash_key`] may answer differently later (`true`,
    /// the default). A backend whose key is fixed when it is made (the
    /// in-memory backend, a [`StoreBackend`], a [`RemoteBackend`]) answers
    /// `false`: the limiter then reads the key once, when it is built, and
    /// a decision's only call into the backend is the check itself.
    fn hash_key_changes(&self) -> bool {
        true
    }
}

fn unsupported() -> BackendError {
    BackendError::new(BackendErrorKind::Unsupported, "")
}

impl<B: Backend + ?Sized> Backend for Arc<B> {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        (**self).check(batch)
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<Result<Decision, BackendError>>> {
        (**self).check_now(batch)
    }

    fn check_now_each(
        &self,
        batch: &Batch,
        answer: &mut dyn FnMut(Result<Decision, BackendError>),
    ) -> bool {
        (**self).check_now_each(batch, answer)
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        (**self).peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        (**self).reset(check)
    }

    fn hash_key(&self) -> Option<crate::HashKey> {
        (**self).hash_key()
    }

    fn hash_key_changes(&self) -> bool {
        (**self).hash_key_changes()
    }
}
