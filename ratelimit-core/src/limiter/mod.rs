//! The limiter: decides whole requests, exactly as DESIGN.md's "Path of one
//! request" and the guide's
//! [Several rules on one request](crate::guide::rules#several-rules-on-one-request)
//! describe.
//!
//! Backstop, then rule selection, keys, the penalty cache, one backend call
//! for every remaining check, fail modes, and one combined answer. Count
//! rules count the upstream's answer afterwards with
//! [`Limiter::record_response`]; rules with `charge: response` are charged
//! what the response cost with [`Limiter::charge`].
//!
//! # The limiter's parts
//!
//! [`Limiter`] is the front callers hold (one `Arc` of the shared parts:
//! backend, clock, published set, caches, switches, stats). Behind it:
//!
//! - the decision pipeline, `Pipeline` (`pipeline.rs`: the hash key and
//!   its change, `key_change.rs`; `check.rs` -> `decide.rs` -> `select.rs`
//!   -> the backend -> `settle.rs`, with `compiled.rs`, `caches.rs`,
//!   `snapshot.rs`): [`Limiter::check`] and [`Snapshot::check`];
//! - the operator's side, `Operator` (`operator.rs`, `publish.rs`,
//!   `admin.rs`, `explain.rs`, `state_gauges.rs`):
//!   [`Limiter::publish`], the rules added at run time, peek / reset /
//!   lift, [`Limiter::explain`], switches, counters and gauges;
//! - response accounting, `Accounting` (`accounting.rs`, `respond.rs`,
//!   `charge.rs`): [`Limiter::record_response`] and [`Limiter::charge`].
//!
//! The operator's and the accounting's public methods are one-line
//! delegations in `front.rs`, the map of which part owns which call. Both
//! parts are crate-private and borrowed for one call; neither settling a
//! decision nor accounting calls back up into the `Limiter`.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};
//! use ratelimit_core::rules::RuleSet;
//!
//! let rules = RuleSet::from_json(r#"[{"id": "login",
//!     "expression": "http.request.uri.path eq \"/login\"",
//!     "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]}]"#).unwrap();
//! let clock = ManualClock::new(1_767_225_600_000);
//! let limiter = Limiter::builder(rules).clock(clock.clone()).build();
//! let req = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/login");
//! # tokio_test_block_on(async {
//! assert!(limiter.check(&req).await.is_forward());
//! assert!(limiter.check(&req).await.is_forward());
//! let third = limiter.check(&req).await;
//! assert_eq!(third.outcome, Outcome::Limited);
//! assert_eq!(third.retry_after_secs(), Some(60));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

mod accounting;
mod admin;
mod builder;
mod caches;
mod charge;
mod check;
mod compiled;
mod current;
mod decide;
mod explain;
mod front;
mod future;
mod inline;
mod key_change;
mod keyed_hooks;
mod operator;
mod overlimit;
mod pipeline;
mod publish;
mod published;
mod respond;
mod select;
mod settle;
mod snapshot;
mod state_gauges;

use std::sync::Arc;

pub use admin::AdminError;
pub use builder::LimiterBuilder;
pub use explain::{Explanation, RuleExplanation, RuleGroup, RuleStatus};
pub use future::{ChargeFuture, VerdictFuture};
pub(crate) use keyed_hooks::{Answer, KeyedHashKey, RuleTarget};
pub(crate) use publish::check_expiry;
pub(crate) use published::Published;
pub use snapshot::Snapshot;

pub use crate::penalty_cache::PenaltyCache;
pub use crate::stats::{LimiterStats, RuleStats};
pub use crate::verdict::{HeaderItem, ResponseTicket, RuleReport};

use crate::backend::Backend;
use crate::backstop::Backstop;
use crate::local::LocalStore;
use crate::rules::RuleSet;
use crate::switches::Switches;
use crate::{Clock, HashKey};

/// Decides requests against a rule set. Cheap to clone: clones share
/// everything.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::{RuleBuilder, RuleSet};
/// use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
/// use std::time::Duration;
///
/// let rule = RuleBuilder::new("api")
///     .fixed_window(1, Duration::from_secs(60))
///     .key(["ip"])
///     .build()?;
/// let limiter = Limiter::builder(RuleSet::from_rules(vec![rule])?)
///     .clock(ManualClock::new(1_767_225_600_000))
///     .build();
/// let req = RequestAttrs::new("192.0.2.1".parse().unwrap());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(limiter.check(&req).await.is_forward());
/// assert!(!limiter.check(&req).await.is_forward());
/// # });
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Limiter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    backend: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    /// The key set on the builder, else the one the backend fixed when it
    /// was made, else a random one of this process.
    own_key: HashKey,
    /// Whether `own_key` is fixed (set on the builder, or fixed by the
    /// backend: [`Backend::hash_key_changes`]): no decision asks the
    /// backend for its key.
    key_is_set: bool,
    /// The key decisions hashed with last (see [`key_change`]).
    seen_key: key_change::SeenKey,
    /// The published rule set.
    current: current::Current,
    /// The decision's local state: penalties, refusals, the local
    /// fallback.
    caches: caches::Caches,
    counts: LocalStore,
    backstop: Option<Backstop>,
    switches: Switches,
    stats: LimiterStats,
    /// Whether every verdict carries its per-rule reports.
    reports: bool,
    /// Every request through the general path, compiled plans unused (the
    /// differential tests' reference).
    #[cfg(test)]
    general_only: bool,
}

impl Limiter {
    /// A limiter for `rules` on the in-memory backend and the system clock.
    pub fn new(rules: RuleSet) -> Self {
        Self::builder(rules).build()
    }

    /// Configures a limiter for `rules`.
    pub fn builder(rules: RuleSet) -> LimiterBuilder {
        LimiterBuilder::new(rules)
    }

    /// The key that hashes subjects and distinct values (the pipeline's,
    /// see [`pipeline`]).
    fn hash_key(&self) -> HashKey {
        self.pipeline().hash_key()
    }

    fn published(&self) -> Arc<Published> {
        self.inner.current.load()
    }

    /// The published rule set.
    pub fn rules(&self) -> RuleSet {
        self.published().set.clone()
    }

    /// The (lower-case) names of the request headers the published rules
    /// read, in expressions, keys and allow lists: a caller building
    /// [`RequestAttrs`](crate::RequestAttrs) needs to copy only these, and a
    /// borrowed [`RequestView`](crate::RequestView) bounds only these. To
    /// check the request against the same rule set (and read it once), use
    /// [`Limiter::snapshot`].
    pub fn headers_used(&self) -> Arc<[String]> {
        self.published().headers_used.clone()
    }

    /// The clock decisions read.
    pub fn now_ms(&self) -> u64 {
        self.inner.clock.now_ms()
    }
}
