//! The pool's defaults: connections per core and the reconnect backoff.

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
