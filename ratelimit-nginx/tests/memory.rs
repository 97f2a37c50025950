//! The real memory of a full zone stays within its configured size.

mod support;

use ratelimit_nginx::ZoneSize;
use support::*;

const TEN_MIB: usize = 10 * 1024 * 1024;

#[test]
#[allow(clippy::print_stdout)]
fn a_full_10m_limit_req_zone_uses_at_most_10_mib() {
    let policy = req_policy(
        "limit_req_zone $http_x_k zone=big:10m rate=1r/s;",
        "limit_req zone=big burst=1;",
    );
    let zone = policy.zones().next().cloned().expect("zone");
    let empty = zone.memory_bytes();
    let capacity = zone.capacity();
    assert_eq!(u64::from(capacity), ZoneSize::mebibytes(10).req_states());
    for n in 0..capacity {
        let req = from("192.0.2.1").with_header("x-k", n.to_string());
        // Two requests each: every state has an excess, none is idle.
        let _ = policy.check(&req, T0);
        assert!(policy.check(&req, T0).rejected().is_none(), "state {n}");
    }
    assert_eq!(zone.len(), capacity);
    let newcomer = policy.check(&from("192.0.2.1").with_header("x-k", "one more"), T0);
    assert_eq!(newcomer.rejected().map(|r| r.zone_exhausted()), Some(true));
    let used = zone.memory_bytes();
    println!(
        "limit_req zone 10m: {capacity} states, {used} bytes used ({:.1}% of 10 MiB)",
        pct(used)
    );
    assert_eq!(used, empty, "the storage never grows");
    assert!(used <= TEN_MIB, "{used} bytes > 10 MiB");
}

#[test]
#[allow(clippy::print_stdout)]
fn a_full_10m_limit_conn_zone_uses_at_most_10_mib() {
    let conn = conn_policy(
        "limit_conn_zone $http_x_k zone=big:10m;",
        "limit_conn big 1;",
    );
    let zone = conn.zones().next().cloned().expect("zone");
    let capacity = zone.capacity();
    assert_eq!(u64::from(capacity), ZoneSize::mebibytes(10).conn_states());
    let permits: Vec<_> = (0..capacity)
        .map(|n| {
            conn.acquire(&from("192.0.2.1").with_header("x-k", n.to_string()))
                .into_permit()
        })
        .collect();
    assert_eq!(zone.len(), capacity);
    let newcomer = conn.acquire(&from("192.0.2.1").with_header("x-k", "one more"));
    assert_eq!(newcomer.rejected().map(|r| r.zone_exhausted()), Some(true));
    let used = zone.memory_bytes();
    println!(
        "limit_conn zone 10m: {capacity} states, {used} bytes used ({:.1}% of 10 MiB)",
        pct(used)
    );
    assert!(used <= TEN_MIB, "{used} bytes > 10 MiB");
    drop(permits);
    assert!(zone.is_empty());
}

fn pct(bytes: usize) -> f64 {
    bytes as f64 * 100.0 / TEN_MIB as f64
}
