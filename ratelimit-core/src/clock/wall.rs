//! [`SystemClock`](super::SystemClock)'s reading: the host's wall clock,
//! read once a second and carried forward in between by the CPU's
//! time-stamp counter (`quanta`), which costs a fraction of a system
//! clock read (issue 38: about 30 instructions against 106 under
//! callgrind, `benches/README.md`).
//!
//! The anchor is `wall - counter`, both in nanoseconds: a reading is the
//! counter plus the anchor. Once [`RESYNC_NS`] of counter time has passed
//! since the last anchor, the next reading takes a new one from the wall
//! clock, so that:
//! - a step of the system clock (an operator's fix, NTP) is followed
//!   within a second, as every instance of a fleet follows its own;
//! - the counter's calibration error (parts per million) never adds up to
//!   more than microseconds.
//!
//! Like the system clock, a reading may go back: by a step of the system
//! clock, or by the little the counter drifted when a new anchor is taken
//! (the algorithms take time going back, see DESIGN.md). Threads share the
//! anchor; two taking a new one at once store nearly the same value, and a
//! thread that sees a new anchor's due time sees its offset too.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Counter time between two anchors.
pub(super) const RESYNC_NS: u64 = 1_000_000_000;

/// The host's wall clock in whole milliseconds since the Unix epoch.
#[inline]
pub(super) fn now_ms() -> u64 {
    let counter = COUNTER.get_or_init(Counter::start);
    ANCHOR.now_ms(counter.now_ns(), wall_ns)
}

/// The process's counter, calibrated on its first reading.
static COUNTER: OnceLock<Counter> = OnceLock::new();

/// The process's anchor: none until the first reading.
static ANCHOR: Anchor = Anchor::new();

/// The time-stamp counter in nanoseconds since the process first read it
/// (`quanta` falls back to the OS's monotonic clock where the counter is
/// not reliable).
#[derive(Debug)]
struct Counter {
    clock: quanta::Clock,
    start: u64,
}

impl Counter {
    fn start() -> Counter {
        let clock = quanta::Clock::new();
        let start = clock.raw();
        Counter { clock, start }
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.start, self.clock.raw())
    }
}

/// The wall clock now, in nanoseconds since the Unix epoch (0 before it).
fn wall_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| {
        d.as_secs() * 1_000_000_000 + u64::from(d.subsec_nanos())
    })
}

/// `wall - counter` at the last anchor, and the counter time of the next.
#[derive(Debug)]
struct Anchor {
    offset_ns: AtomicU64,
    next_ns: AtomicU64,
}

impl Anchor {
    /// No anchor yet: the first reading takes one.
    const fn new() -> Self {
        Self {
            offset_ns: AtomicU64::new(0),
            next_ns: AtomicU64::new(0),
        }
    }

    /// The wall time at counter time `counter_ns`, taking a new anchor
    /// from `wall_ns` when the last one is [`RESYNC_NS`] old (or none).
    #[inline]
    fn now_ms(&self, counter_ns: u64, wall_ns: impl FnOnce() -> u64) -> u64 {
        // Acquire: an anchor's offset is seen with the time it is due
        // until (stored before it, with Release).
        let offset = if counter_ns >= self.next_ns.load(Acquire) {
            self.resync(counter_ns, wall_ns())
        } else {
            self.offset_ns.load(Relaxed)
        };
        counter_ns.wrapping_add(offset) / 1_000_000
    }

    #[cold]
    #[inline(never)]
    fn resync(&self, counter_ns: u64, wall_ns: u64) -> u64 {
        let offset = wall_ns.wrapping_sub(counter_ns);
        self.offset_ns.store(offset, Relaxed);
        self.next_ns
            .store(counter_ns.saturating_add(RESYNC_NS), Release);
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const MS: u64 = 1_000_000;
    const T0_NS: u64 = 1_767_225_600_000 * MS;

    #[test]
    fn a_reading_is_the_wall_clock_carried_forward_by_the_counter() {
        let a = Anchor::new();
        let walls = Cell::new(0);
        let wall = |ns: u64| {
            let walls = &walls;
            move || {
                walls.set(walls.get() + 1);
                ns
            }
        };
        // The first reading anchors; the next ones add the counter's time.
        assert_eq!(a.now_ms(5 * MS, wall(T0_NS)), T0_NS / MS);
        assert_eq!(a.now_ms(5 * MS + 999_999, wall(0)), T0_NS / MS);
        assert_eq!(a.now_ms(6 * MS, wall(0)), T0_NS / MS + 1);
        assert_eq!(a.now_ms(5 * MS + 800 * MS, wall(0)), T0_NS / MS + 800);
        assert_eq!(walls.get(), 1, "the wall clock is read once a second");
    }

    #[test]
    fn a_step_of_the_system_clock_is_followed_within_a_second() {
        let a = Anchor::new();
        assert_eq!(a.now_ms(0, || T0_NS), T0_NS / MS);
        // The system clock is set back an hour: not seen before the second
        // is up, then read.
        let back = T0_NS - 3_600_000 * MS;
        let just_before = RESYNC_NS - 1;
        assert_eq!(a.now_ms(just_before, || back), (T0_NS + just_before) / MS);
        assert_eq!(a.now_ms(RESYNC_NS, || back), back / MS);
        assert_eq!(a.now_ms(RESYNC_NS + 2 * MS, || 0), back / MS + 2);
        // And forward again at the next second.
        let ahead = T0_NS + 3_600_000 * MS;
        assert_eq!(a.now_ms(2 * RESYNC_NS, || ahead), ahead / MS);
    }

    #[test]
    fn a_counter_that_drifted_is_corrected_at_the_next_anchor() {
        let a = Anchor::new();
        a.now_ms(0, || T0_NS);
        // The counter ran 50 µs fast over the second: the wall clock says
        // so, and the reading after the anchor is the wall clock's.
        let counter = RESYNC_NS + 50_000;
        assert_eq!(
            a.now_ms(counter, || T0_NS + RESYNC_NS),
            (T0_NS + RESYNC_NS) / MS
        );
    }

    #[test]
    fn readings_stay_within_a_millisecond_of_the_system_clock() {
        // Each reading lies between two reads of the system clock around it
        // (a thread preempted between them only widens the bounds).
        for _ in 0..200 {
            let before = wall_ns() / MS;
            let ours = now_ms();
            let after = wall_ns() / MS;
            assert!(
                before.saturating_sub(1) <= ours && ours <= after + 1,
                "{before} <= {ours} <= {after}"
            );
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
    }
}
