//! Valkey for the tests: the check that Valkey and this host share a
//! clock. The harness itself (servers, proxies, `INFO` readers) is
//! `ratelimit_testkit::valkey`.

use ratelimit_testkit::valkey::connect;

use super::wall_ms;

/// Checks that Valkey `TIME` and the wall clock of this process agree to
/// the millisecond: the bounds of `super::bounds` rely on it. Returns the
/// server's time in ms and the bracket it fell in.
pub async fn assert_same_clock(url: &str) -> (u64, u64, u64) {
    let mut c = connect(url).await;
    for _ in 0..5 {
        let before = wall_ms();
        let (secs, micros): (u64, u64) =
            redis::cmd("TIME").query_async(&mut c).await.expect("TIME");
        let after = wall_ms();
        let t = secs * 1000 + micros / 1000;
        if before <= t && t <= after {
            return (t, before, after);
        }
    }
    panic!("Valkey TIME and the wall clock of this host disagree: the window checks need one clock")
}
