//! How a follower spaces its reads of the control state under a flood of
//! notices.
//!
//! A notice only wakes the follower, and wake-ups coalesce: at most one
//! read is in flight and one more is queued, whatever the number of
//! notices. Under a flood that still means one read after another, as
//! fast as Valkey answers (issue 39 measured about 2,900 reads per follower
//! for 45,000 notices over 4.5 s): work taken from the requests the instance and
//! Valkey serve. So when a notice arrives while a read is in flight (a
//! flood, or a change made just after the read began), the next read
//! starts [`FLOOD_GAP`] after this one did, not at once: a flood costs at
//! most one read per gap, and a change made during one is applied within
//! the gap and one read. A notice after a quiet moment is read at once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// The least time between the starts of two reads while notices keep
/// arriving during reads: 100 ms (a fifth of the default poll, the bound
/// when a notice is lost).
pub const FLOOD_GAP: Duration = Duration::from_millis(100);

/// One read of the control state, from its start.
#[derive(Debug)]
pub(crate) struct Pace {
    started: Instant,
    notices: u64,
}

impl Pace {
    /// A read starts now; `notices` counts the notices received.
    pub(crate) fn start(notices: &AtomicU64) -> Self {
        Self {
            started: Instant::now(),
            notices: notices.load(Ordering::Relaxed),
        }
    }

    /// The read is done: when a notice arrived during it, waits until
    /// [`FLOOD_GAP`] after its start (the wake-up stays queued meanwhile).
    pub(crate) async fn finish(self, notices: &AtomicU64) {
        if notices.load(Ordering::Relaxed) != self.notices {
            tokio::time::sleep_until(self.started + FLOOD_GAP).await;
        }
    }
}
