//! One node's connections: a small fixed set of multiplexed connections,
//! each kept up by a background task of its own.
//!
//! A request takes the next connected one, round robin, and sends its
//! whole pipeline on it (one round trip). Connecting never happens inside
//! a request's deadline: a request finding no connection gets an immediate
//! error (the rule's fail mode answers), and the connection's task keeps
//! trying with a backoff. While the node's circuit breaker is open the
//! tasks wait; the breaker's probe wakes one and waits for its connection
//! before it is sent (one connection attempt per probe); its success wakes
//! the others. A connection that failed a request is dropped and
//! made again; one that timed out is checked with a `PING` (a slow server
//! keeps its connections, a dead one loses them).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};
use tokio::sync::{watch, Notify};

use crate::breaker::Breaker;
use crate::link::Link;

/// Connections per node by default: one per core the process may run on,
/// at least 2 (one connection that breaks would leave none) and at most 4.
/// More connections than cores only split the requests in flight into
/// smaller pipelines, which cost the server more per call (see
/// `benches/HISTORY.md`: on 2 cores, 2 connections made 3% more decisions
/// per second than 4 with a 1-thread client and 6-11% more with a 2-thread
/// one).
pub(crate) fn default_connections() -> usize {
    let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
    cores.clamp(2, 4)
}

/// What a connection task needs.
#[derive(Debug, Clone)]
pub(crate) struct Connector {
    pub(crate) client: Client,
    pub(crate) connect_timeout: Duration,
    pub(crate) breaker: Arc<Breaker>,
    /// The node's link state, which logs its losses and restores.
    pub(crate) link: Arc<Link>,
}

#[derive(Debug, Default)]
struct State {
    conn: Option<MultiplexedConnection>,
    /// Bumped on every new connection, so a stale report cannot drop a
    /// newer one.
    generation: u64,
    /// Connection attempts finished (made or failed).
    attempts: u64,
    /// Why the last attempt failed, or why the connection was dropped.
    error: Option<Arc<str>>,
    /// Check the connection with a `PING`.
    suspect: bool,
}

#[derive(Debug, Default)]
struct Slot {
    state: Mutex<State>,
    wake: Notify,
    closed: AtomicBool,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A connection lent to one request.
#[derive(Debug)]
pub(crate) struct Lease {
    slot: usize,
    generation: u64,
    pub(crate) conn: MultiplexedConnection,
}

/// The connections of one node; their tasks stop when it is dropped.
#[derive(Debug)]
pub(crate) struct Pool {
    slots: Box<[Arc<Slot>]>,
    next: AtomicUsize,
    /// Bumped after every attempt of any connection.
    events: Arc<watch::Sender<u64>>,
    link: Arc<Link>,
}

impl Pool {
    /// `n` connections (at least one), each connecting at once in the
    /// background. Must be called within a tokio runtime.
    pub(crate) fn start(connector: Connector, n: usize) -> Self {
        let (events, _) = watch::channel(0);
        let events = Arc::new(events);
        let slots: Box<[Arc<Slot>]> = (0..n.max(1)).map(|_| Arc::default()).collect();
        for slot in slots.iter() {
            tokio::spawn(keep_up(connector.clone(), slot.clone(), events.clone()));
        }
        Self {
            slots,
            next: AtomicUsize::new(0),
            events,
            link: connector.link,
        }
    }

    /// The next connected connection, round robin, or why there is none.
    pub(crate) fn pick(&self) -> Result<Lease, Arc<str>> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut why = None;
        for i in 0..n {
            let slot = (start + i) % n;
            let s = self.slots[slot].lock();
            if let Some(conn) = &s.conn {
                return Ok(Lease {
                    slot,
                    generation: s.generation,
                    conn: conn.clone(),
                });
            }
            why = why.or_else(|| s.error.clone());
        }
        Err(why.unwrap_or_else(|| "not connected yet".into()))
    }

    /// A request on `lease` failed at the transport: drop that connection
    /// (its task connects again) and have the others checked.
    pub(crate) fn broken(&self, lease: &Lease, why: &str) {
        let slot = &self.slots[lease.slot];
        {
            let mut s = slot.lock();
            if s.generation == lease.generation && s.conn.is_some() {
                s.conn = None;
                s.error = Some(why.into());
                self.link.dropped(why);
            }
        }
        slot.wake.notify_one();
        for (i, other) in self.slots.iter().enumerate() {
            if i != lease.slot {
                other.lock().suspect = true;
                other.wake.notify_one();
            }
        }
    }

    /// A request on `lease` timed out: have that connection checked.
    pub(crate) fn suspect(&self, lease: &Lease) {
        let slot = &self.slots[lease.slot];
        {
            let mut s = slot.lock();
            if s.generation == lease.generation {
                s.suspect = true;
            }
        }
        slot.wake.notify_one();
    }

    fn attempts(&self) -> Vec<u64> {
        self.slots.iter().map(|s| s.lock().attempts).collect()
    }

    /// Wakes every connection task (after the breaker closed again).
    pub(crate) fn wake_all(&self) {
        for slot in self.slots.iter() {
            slot.wake.notify_one();
        }
    }

    /// Wakes one connection task (even while the breaker is open: one
    /// connection attempt per probe, not one per connection) and waits, at
    /// most `within`, for a connection, or until that one has tried.
    pub(crate) async fn wait_connected(&self, within: Duration) -> Result<Lease, Arc<str>> {
        let mut events = self.events.subscribe();
        let n = self.slots.len();
        let one = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % n];
        let before = one.lock().attempts;
        one.wake.notify_one();
        let wait = async {
            loop {
                let tried = || one.lock().attempts > before;
                if let Some(r) = look(tried, || self.pick()) {
                    return r;
                }
                if events.changed().await.is_err() {
                    return self.pick();
                }
            }
        };
        match tokio::time::timeout(within, wait).await {
            Ok(r) => r,
            Err(_) => self
                .pick()
                .map_err(|why| format!("no connection within {within:?} ({why})").into()),
        }
    }

    /// Waits, at most `within`, until every connection has tried once.
    pub(crate) async fn first_attempts(&self, within: Duration) {
        let mut events = self.events.subscribe();
        let wait = async {
            while self.attempts().contains(&0) {
                if events.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(within, wait).await;
    }

    /// Whether a connection is up.
    pub(crate) fn is_connected(&self) -> bool {
        self.slots.iter().any(|s| s.lock().conn.is_some())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            slot.closed.store(true, Ordering::SeqCst);
            slot.wake.notify_one();
        }
    }
}

/// One look of a waiter ([`Pool::wait_connected`]): a connection, or why
/// there is none once the woken one has `tried`; `None` to wait for the
/// next attempt. Whether it tried is read before the connections: an
/// attempt that succeeds between the two reads is then either found or
/// seen at the next look. In the other order, one that succeeded just
/// after the connections were read counted as tried and failed ("not
/// connected yet"): at start the hash key's first read failed so, and
/// `build` returned with the key unknown, the first checks failing open.
fn look<L, E>(
    tried: impl FnOnce() -> bool,
    pick: impl FnOnce() -> Result<L, E>,
) -> Option<Result<L, E>> {
    let tried = tried();
    match pick() {
        Ok(lease) => Some(Ok(lease)),
        Err(why) => tried.then_some(Err(why)),
    }
}

/// How long to wait before the next attempt after `failures` in a row:
/// 50 ms doubling to 1 s, less up to a quarter at random so that a fleet
/// does not reconnect in step.
pub(crate) fn backoff(failures: u32) -> Duration {
    let ms = 50u64 << failures.saturating_sub(1).min(5);
    let ms = ms.min(1000);
    let mut h = RandomState::new().build_hasher();
    h.write_u32(failures);
    Duration::from_millis(ms - h.finish() % (ms / 4 + 1))
}

/// A short description of a connection error.
pub(crate) fn describe(e: &RedisError) -> String {
    if e.is_connection_refusal() {
        "connection refused".into()
    } else if e.is_timeout() {
        "timed out".into()
    } else {
        e.to_string()
    }
}

/// One connection's task: connect, wait until told the connection broke
/// (or should be checked), connect again, with a backoff; wait while the
/// breaker is open until a probe (or a management command) wakes it.
async fn keep_up(c: Connector, slot: Arc<Slot>, events: Arc<watch::Sender<u64>>) {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(c.connect_timeout))
        .set_response_timeout(None);
    let mut failures: u32 = 0;
    loop {
        if slot.closed.load(Ordering::SeqCst) {
            return;
        }
        let (conn, suspect, generation) = {
            let mut s = slot.lock();
            let suspect = std::mem::take(&mut s.suspect);
            (s.conn.clone(), suspect, s.generation)
        };
        if let Some(conn) = conn {
            if suspect && !answers_ping(&c, &slot, conn, generation).await {
                continue;
            }
            slot.wake.notified().await;
            continue;
        }
        if failures > 0 {
            wait_to_retry(&c, &slot, failures).await;
            if slot.closed.load(Ordering::SeqCst) {
                return;
            }
        }
        let attempt = c
            .client
            .get_multiplexed_async_connection_with_config(&config);
        let made = match tokio::time::timeout(c.connect_timeout, attempt).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(describe(&e)),
            Err(_) => Err(format!(
                "connecting timed out after {:?}",
                c.connect_timeout
            )),
        };
        {
            let mut s = slot.lock();
            s.attempts += 1;
            match made {
                Ok(conn) => {
                    failures = 0;
                    s.conn = Some(conn);
                    s.generation += 1;
                    s.error = None;
                    s.suspect = false;
                    c.link.connected();
                }
                Err(why) => {
                    failures = failures.saturating_add(1);
                    c.link.failed(&why);
                    s.error = Some(why.into());
                }
            }
        }
        events.send_modify(|n| *n += 1);
    }
}

/// Whether a suspect connection answers `PING` in time; when it does not,
/// drops it from `slot` (unless it was remade meanwhile).
async fn answers_ping(
    c: &Connector,
    slot: &Slot,
    mut conn: MultiplexedConnection,
    generation: u64,
) -> bool {
    let cmd = redis::cmd("PING");
    let ping = cmd.query_async::<redis::Value>(&mut conn);
    if matches!(
        tokio::time::timeout(c.connect_timeout, ping).await,
        Ok(Ok(_))
    ) {
        return true;
    }
    let mut s = slot.lock();
    if s.generation == generation && s.conn.is_some() {
        let why = "the connection did not answer PING";
        s.conn = None;
        s.error = Some(why.into());
        c.link.dropped(why);
    }
    false
}

/// After `failures` failed attempts: waits out the backoff, trying again on
/// our own only while the breaker is closed; else waits to be woken (by
/// the probe).
async fn wait_to_retry(c: &Connector, slot: &Slot, failures: u32) {
    loop {
        if c.breaker.is_open() {
            slot.wake.notified().await;
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff(failures)) => {
                if !c.breaker.is_open() {
                    break;
                }
            }
            _ = slot.wake.notified() => break,
        }
    }
}

#[cfg(test)]
mod tests;
