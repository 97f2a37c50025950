//! A [`Clock`] that follows Tokio's time, so that paused-time tests and the
//! limiter agree on how much time went by.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::Clock;
//! use ratelimit_nginx::TokioClock;
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let clock = TokioClock::new();
//! let before = clock.now_ms();
//! tokio::time::sleep(Duration::from_secs(3)).await;
//! assert_eq!(clock.now_ms() - before, 3000);
//! # }
//! ```

use ratelimit_core::{Clock, SystemClock};
use tokio::time::Instant;

/// Unix milliseconds at creation, advanced by Tokio's (monotonic, pausable) clock.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start_ms: u64,
    start: Instant,
}

impl TokioClock {
    /// A clock reading the wall time now and following Tokio's time from here.
    pub fn new() -> Self {
        Self {
            start_ms: SystemClock.now_ms(),
            start: Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.start_ms.saturating_add(elapsed)
    }
}
