//! The pool's defaults: connections per core and the reconnect backoff;
//! a waiter's look at a connection attempt ending meanwhile.

use super::*;

#[test]
fn the_default_is_a_connection_per_core_from_two_to_four() {
    let cores = std::thread::available_parallelism().unwrap().get();
    let n = default_connections();
    assert!((2..=4).contains(&n), "{n}");
    assert!(
        n == cores || (cores < 2 && n == 2) || (cores > 4 && n == 4),
        "{cores}: {n}"
    );
}

#[test]
fn backoff_grows_to_a_second_with_jitter_below() {
    for (failures, top) in [(1, 50), (2, 100), (3, 200), (6, 1000), (40, 1000)] {
        let d = backoff(failures).as_millis() as u64;
        assert!(d <= top && d >= top - top / 4, "{failures}: {d} ms");
    }
}

/// A waiter's look while the woken connection's attempt succeeds, right
/// after the look's `n`th read (0: before the look).
fn look_while_connecting(n: u8) -> Option<Result<(), &'static str>> {
    let (up, reads) = (std::cell::Cell::new(n == 0), std::cell::Cell::new(0));
    let read = || {
        let v = up.get();
        reads.set(reads.get() + 1);
        if reads.get() == n {
            up.set(true);
        }
        v
    };
    look(read, || read().then_some(()).ok_or("not connected yet"))
}

#[test]
fn a_connection_made_while_a_waiter_looks_is_never_a_failure() {
    assert_eq!(look_while_connecting(0), Some(Ok(())), "made before");
    assert_eq!(look_while_connecting(1), Some(Ok(())), "between the reads");
    assert_eq!(look_while_connecting(2), None, "after both: the next look");
    let refused = look(|| true, || Err::<(), _>("connection refused"));
    assert_eq!(refused, Some(Err("connection refused")), "tried, failed");
    assert_eq!(look(|| false, || Err::<(), _>("x")), None, "not tried yet");
}
