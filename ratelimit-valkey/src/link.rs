//! Whether a node is reachable, and the log of each change: once per
//! transition, never per connection or per attempt.
//!
//! A node is up while at least one of its connections is. The last one
//! dropped (its call failed, or it did not answer `PING`) is logged at
//! `WARN` `valkey connection lost`; the first one made again at `INFO`
//! `valkey connection restored`, with how long the node was down. A node
//! that has never been up logs its first failed attempt at `WARN` `cannot
//! connect to valkey; retrying in the background`, and its first
//! connection as restored. Every restore wakes the backend's hash key
//! check (see [`crate::hashkey`]): a server that restarted may hold
//! another key, or none. (A first connection made without a failure wakes
//! nothing: the check runs at start anyway.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

/// One node's link state, shared by its connection tasks.
#[derive(Debug)]
pub(crate) struct Link {
    addr: Arc<str>,
    /// Connections up now.
    up: AtomicUsize,
    /// Since when the node is down, once that was logged (cleared at the
    /// restore).
    down: Mutex<Down>,
    /// Woken at each restore; shared by the nodes of one backend.
    restored: Arc<Notify>,
}

#[derive(Debug, Default)]
enum Down {
    /// Not connected yet, nothing logged.
    #[default]
    Starting,
    /// Up (or down for a moment, nothing logged yet).
    Up,
    /// Down since then, logged.
    Since(Instant),
}

impl Link {
    pub(crate) fn new(addr: Arc<str>, restored: Arc<Notify>) -> Self {
        Self {
            addr,
            up: AtomicUsize::new(0),
            down: Mutex::new(Down::Starting),
            restored,
        }
    }

    fn down(&self) -> std::sync::MutexGuard<'_, Down> {
        self.down.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection was made.
    pub(crate) fn connected(&self) {
        if self.up.fetch_add(1, Ordering::SeqCst) != 0 {
            return;
        }
        let was = std::mem::replace(&mut *self.down(), Down::Up);
        match was {
            Down::Since(t) => {
                let down_ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
                tracing::info!(node = %self.addr, down_ms, "valkey connection restored");
                self.restored.notify_one();
            }
            Down::Starting => tracing::debug!(node = %self.addr, "connected to valkey"),
            Down::Up => {}
        }
    }

    /// A connection that was up was dropped, because of `why`.
    pub(crate) fn dropped(&self, why: &str) {
        let before = self
            .up
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if before != Ok(1) {
            return;
        }
        let mut down = self.down();
        if matches!(*down, Down::Up) && self.up.load(Ordering::SeqCst) == 0 {
            *down = Down::Since(Instant::now());
            tracing::warn!(node = %self.addr, error = %why, "valkey connection lost");
        }
    }

    /// A connection attempt failed: logged once while the node has never
    /// been up (a loss is logged by [`Link::dropped`]).
    pub(crate) fn failed(&self, why: &str) {
        let mut down = self.down();
        if matches!(*down, Down::Starting) {
            *down = Down::Since(Instant::now());
            tracing::warn!(node = %self.addr, error = %why, "cannot connect to valkey; retrying in the background");
        } else {
            tracing::debug!(node = %self.addr, error = %why, "cannot connect to valkey");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> (Link, Arc<Notify>) {
        let restored = Arc::new(Notify::new());
        (Link::new("127.0.0.1:1".into(), restored.clone()), restored)
    }

    fn state(l: &Link) -> &'static str {
        match *l.down() {
            Down::Starting => "starting",
            Down::Up => "up",
            Down::Since(_) => "down",
        }
    }

    #[test]
    fn the_node_is_down_only_when_its_last_connection_drops() {
        let (l, _) = link();
        l.connected();
        l.connected();
        assert_eq!(state(&l), "up");
        l.dropped("gone");
        assert_eq!(state(&l), "up", "one connection left");
        l.dropped("gone");
        assert_eq!(state(&l), "down");
        l.failed("refused");
        assert_eq!(state(&l), "down", "still down, not logged again");
        l.connected();
        assert_eq!(state(&l), "up");
    }

    #[test]
    fn a_failure_at_start_counts_as_down_and_each_restore_wakes_the_key_check() {
        let (l, restored) = link();
        l.failed("refused");
        assert_eq!(state(&l), "down");
        l.connected();
        assert_eq!(state(&l), "up");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let woken = |n: Arc<Notify>| {
            rt.block_on(async move {
                let wait = std::time::Duration::from_millis(50);
                tokio::time::timeout(wait, n.notified()).await.is_ok()
            })
        };
        assert!(woken(restored), "the restore left a wake-up");
        let (quiet, restored) = link();
        quiet.connected();
        assert!(!woken(restored), "a first connection wakes nothing");
    }
}
