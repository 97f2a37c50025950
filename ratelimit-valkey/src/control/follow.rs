//! One instance following the control channel: a subscriber that turns
//! notices into a wake-up (never reading their body), and a loop that
//! reads the control state on each wake-up or every `poll`, applies what
//! changed, and reports the instance to the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use ratelimit_core::control::{ControlError, Published};
use ratelimit_core::rules::Rule;
use ratelimit_core::Limiter;
use tokio::sync::Notify;

use super::own_thread::{run_apart, Running, Task};
use super::pace::Pace;
use super::ValkeyControl;

/// How an instance follows the control channel.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FollowConfig {
    /// This instance's unique name in the registry.
    pub instance: String,
    /// How often the control state is read without a notice (default
    /// 500 ms): the bound when a notice is lost.
    pub poll: Duration,
    /// How often the instance reports itself (default 5 s; also right
    /// after it applied a change).
    pub report_every: Duration,
    /// The rule-set schema this instance reads: the build's
    /// [`Published::SCHEMA`](ratelimit_core::control::Published::SCHEMA) by default; a lower
    /// one makes it behave as an older build (refusing newer sets, holding
    /// publishes), to rehearse an upgrade.
    pub schema: u32,
    /// The fleet size the follower keeps up to date from the registry:
    /// hand a clone to `LimiterBuilder::fleet_size` when building the
    /// limiter (default: a new one starting at 1).
    pub fleet: Arc<AtomicU64>,
}

impl FollowConfig {
    /// Instance `instance`, with the default intervals.
    pub fn new(instance: impl Into<String>) -> Self {
        Self {
            instance: instance.into(),
            poll: Duration::from_millis(500),
            report_every: Duration::from_secs(5),
            schema: Published::SCHEMA,
            fleet: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Sets how often the state is read without a notice.
    #[must_use]
    pub fn poll(mut self, every: Duration) -> Self {
        self.poll = every;
        self
    }

    /// Sets the schema this instance reads (see [`FollowConfig::schema`]).
    #[must_use]
    pub fn schema(mut self, schema: u32) -> Self {
        self.schema = schema;
        self
    }

    /// Sets the fleet size the follower keeps (see [`FollowConfig::fleet`]).
    #[must_use]
    pub fn fleet_size(mut self, fleet: Arc<AtomicU64>) -> Self {
        self.fleet = fleet;
        self
    }

    /// Sets how often the instance reports itself.
    #[must_use]
    pub fn report_every(mut self, every: Duration) -> Self {
        self.report_every = every;
        self
    }
}

/// What the follower has applied, shared with its handle.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// The published version running (0: the start-up set).
    pub(crate) version: u64,
    /// The lineage of the running version (new when the control keys are
    /// created afresh, e.g. after a Valkey restart without persistence).
    pub(crate) epoch: Option<String>,
    /// The (epoch, version) last read, loaded or refused.
    pub(crate) seen: Option<(String, u64)>,
    /// The last version refused, and why.
    pub(crate) refused: Option<(u64, String)>,
    /// The control keys were there and are gone.
    pub(crate) lost: bool,
    /// The last lift applied.
    pub(crate) lift_seq: u64,
    /// Valkey did not answer the last read.
    pub(crate) unreachable: bool,
    /// The parts of the control state that cannot be read (by the part's
    /// name), and why.
    pub(crate) problems: BTreeMap<&'static str, String>,
    /// The rules added at run time this follower runs, by id.
    pub(crate) added: BTreeMap<String, Rule>,
    /// Why stored rules added at run time are refused, at the last read
    /// of a changed value (each logged once, and reported).
    pub(crate) added_refused: BTreeSet<String>,
    /// The stamp of the stored rules last applied.
    pub(crate) added_stamp: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The schema this instance reads.
    pub(crate) schema: u32,
    pub(crate) applied: Mutex<Applied>,
    pub(crate) wake: Notify,
    pub(crate) notices: AtomicU64,
    pub(crate) reads: AtomicU64,
}

impl Applied {
    /// What this instance cannot apply: the parts of the control state it
    /// cannot read, and the stored rules added at run time it refused.
    pub(crate) fn problems(&self) -> Vec<String> {
        let refused = self
            .added_refused
            .iter()
            .map(|why| format!("a rule added at run time is refused: {why}"));
        self.problems.values().cloned().chain(refused).collect()
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Applied> {
        self.applied.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running follower; its tasks (on a thread of their own) stop when it
/// is dropped.
#[derive(Debug)]
pub struct Follower {
    shared: Arc<Shared>,
    fleet: Arc<AtomicU64>,
    _running: Running,
}

impl Follower {
    /// The published version this instance runs (0: its start-up set).
    pub fn running_version(&self) -> u64 {
        self.shared.lock().version
    }

    /// The last version this instance refused to load, and why.
    pub fn refused(&self) -> Option<(u64, String)> {
        self.shared.lock().refused.clone()
    }

    /// Whether the control keys were there and are gone (Valkey restarted
    /// without persistence, or they were deleted): the instance keeps its
    /// set until the next publish.
    pub fn control_lost(&self) -> bool {
        self.shared.lock().lost
    }

    /// The fleet size from the registry, for `LimiterBuilder::fleet_size`
    /// (the last count while Valkey is down).
    pub fn fleet_size(&self) -> Arc<AtomicU64> {
        self.fleet.clone()
    }

    /// The parts of the control state this instance cannot read, each
    /// naming the key and what it should hold (also in its report).
    pub fn problems(&self) -> Vec<String> {
        self.shared.lock().problems()
    }

    /// Notices received on the channel so far.
    pub fn notices(&self) -> u64 {
        self.shared.notices.load(Ordering::Relaxed)
    }

    /// Reads of the control state so far (notices are coalesced: a flood
    /// of them makes few reads).
    pub fn reads(&self) -> u64 {
        self.shared.reads.load(Ordering::Relaxed)
    }
}

impl ValkeyControl {
    /// Follows the control channel with `limiter`: applies published sets
    /// (counts of unchanged rules kept), switches and lifts, and reports
    /// the instance to the registry. While Valkey is down the instance
    /// keeps what it runs. The follower runs on a thread of its own, with
    /// its own runtime and connection, off the threads that serve requests
    /// (on the caller's tokio runtime only if the system refuses a thread).
    pub fn follow(&self, limiter: Limiter, config: FollowConfig) -> Follower {
        let shared = Arc::new(Shared {
            schema: config.schema,
            ..Shared::default()
        });
        let fleet = config.fleet.clone();
        let control = self.with_own_connection();
        let name = format!("ratelimit-follow-{}", config.instance.replace('\0', ""));
        let tasks: Vec<Task> = vec![
            Box::pin(listen(control.clone(), shared.clone())),
            Box::pin(run(control, limiter, config, shared.clone(), fleet.clone())),
        ];
        Follower {
            shared,
            fleet,
            _running: run_apart(name, tasks),
        }
    }
}

/// Subscribes to the channel and wakes the loop on every notice (and after
/// every reconnect, since notices may have been missed). Retries after
/// 200 ms, doubling up to 5 s while it fails; a refused subscription is
/// logged once (the poll still converges).
async fn listen(control: ValkeyControl, shared: Arc<Shared>) {
    let mut backoff = Duration::from_millis(200);
    let mut warned = false;
    loop {
        match control.conn.pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(&control.keys.channel).await {
                Err(e) => {
                    if !warned {
                        tracing::warn!(error = %e, "control channel: cannot subscribe; following by polling only");
                        warned = true;
                    }
                }
                Ok(()) => {
                    backoff = Duration::from_millis(200);
                    warned = false;
                    shared.wake.notify_one();
                    let mut messages = pubsub.on_message();
                    while messages.next().await.is_some() {
                        shared.notices.fetch_add(1, Ordering::Relaxed);
                        shared.wake.notify_one();
                    }
                }
            },
            Err(e) => tracing::debug!(error = %e, "control channel: cannot connect"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn run(
    control: ValkeyControl,
    limiter: Limiter,
    config: FollowConfig,
    shared: Arc<Shared>,
    fleet: Arc<AtomicU64>,
) {
    let mut last_report: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            () = shared.wake.notified() => {}
            () = tokio::time::sleep(config.poll) => {}
        }
        let pace = Pace::start(&shared.notices);
        shared.reads.fetch_add(1, Ordering::Relaxed);
        let changed = match control.sync(&limiter, &shared).await {
            Ok(changed) => changed,
            Err(e) => {
                control.unreachable(&shared, &e);
                false
            }
        };
        let due = last_report.is_none_or(|t| t.elapsed() >= config.report_every);
        if changed || due {
            match control.report(&limiter, &config.instance, &shared).await {
                Ok(n) => {
                    fleet.store(n.max(1), Ordering::SeqCst);
                    last_report = Some(tokio::time::Instant::now());
                }
                Err(e) => tracing::debug!(error = %e, "control: report failed"),
            }
        }
        pace.finish(&shared.notices).await;
    }
}

impl ValkeyControl {
    fn unreachable(&self, shared: &Shared, e: &ControlError) {
        let mut a = shared.lock();
        if !a.unreachable {
            tracing::warn!(error = %e, version = a.version, "control: Valkey does not answer; keeping the running set, switches and rules added at run time");
        }
        a.unreachable = true;
    }
}
