//! Key-rotation floods over pipelined TCP connections through the tower
//! layer: new subjects and new penalties by the thousand, the stores stay
//! within their capacities.
//!
//! Each case checks the answer (the limiter still limits by the right key),
//! that the server is still up (nothing panicked), and that the limiter's
//! stores stay within their configured capacities
//! (`MemoryBackend::len()`, the penalty cache's `len()`); the site is
//! `ratelimit_tests::support::hostile`.
#![allow(clippy::print_stderr)]

use std::net::SocketAddr;
use std::time::Instant;

use ratelimit_tests::support::hostile::*;
use ratelimit_tests::support::http::{get, pipeline};
use ratelimit_tower::TrustedProxies;

fn v6_request(i: u64) -> Vec<u8> {
    // 100,000 addresses of 2001:db8:aa:bb::/64.
    let h = format!(
        "x-forwarded-for: 2001:db8:aa:bb:{:x}:{:x}:{:x}:{:x}",
        (i >> 48) & 0xffff,
        (i >> 32) & 0xffff,
        (i >> 16) & 0xffff,
        i & 0xffff
    );
    get(b"/v6", &[h.as_bytes()])
}

/// Sends `n` requests made by `make`, over 4 pipelined connections.
async fn flood(addr: SocketAddr, n: u64, make: fn(u64) -> Vec<u8>) -> Vec<u16> {
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..4u64 {
        tasks.spawn(async move {
            let reqs = (c..n).step_by(4).map(make);
            pipeline(addr, reqs, 256).await.expect("pipelined answers")
        });
    }
    let mut out = Vec::new();
    while let Some(r) = tasks.join_next().await {
        out.extend(r.expect("flood task"));
    }
    out
}

fn count(statuses: &[u16], status: u16) -> usize {
    statuses.iter().filter(|&&s| s == status).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_rotation_floods_stay_bounded() {
    let s = site(TrustedProxies::hops(1), Server::Axum).await;
    let started = Instant::now();
    // 100,000 IPv6 addresses in one /64: one subject, limit 10.
    let v6 = flood(s.addr, 100_000, v6_request).await;
    assert_eq!(v6.len(), 100_000);
    assert_eq!(
        (count(&v6, 200), count(&v6, 429)),
        (10, 99_990),
        "one /64 is one subject"
    );
    assert_eq!(s.memory.len(), 1, "one subject stored");
    let v6_took = started.elapsed();

    // 100,000 distinct values of a keyed header: each a new subject (all
    // admitted), the store stays within its capacity.
    let started = Instant::now();
    let rot = flood(s.addr, 100_000, |i| {
        get(b"/rot", &[format!("x-key: k{i}").as_bytes()])
    })
    .await;
    assert_eq!(count(&rot, 200), 100_000);
    assert!(
        s.memory.len() <= MEMORY_CAPACITY,
        "the memory backend holds {}",
        s.memory.len()
    );
    let rot_took = started.elapsed();

    // 3,000 subjects over the limit with a penalty: the penalty cache keeps
    // at most its capacity (a dropped block still answers 429 from the
    // backend's own penalty state). A subject's two requests go one after
    // the other on one connection (`flood` gives connection c the requests
    // c, c + 4, ...): the store is full of live states by now, and a
    // subject whose second request came far behind its first, on another
    // connection, could be the least recently used of a sampled run and
    // lose its state in between (a full store evicts live states), which
    // would admit it twice (seen once as 3,001 / 2,999 in a run of the
    // whole suite under load).
    let pen = flood(s.addr, 6_000, |i| {
        let subject = i / 8 * 4 + i % 4;
        get(b"/pen", &[format!("x-key: p{subject}").as_bytes()])
    })
    .await;
    assert_eq!((count(&pen, 200), count(&pen, 429)), (3_000, 3_000));
    let pc = s.limiter.penalty_cache();
    assert!(pc.len() <= PENALTY_CAPACITY, "penalty cache {}", pc.len());
    assert!(pc.dropped() > 0, "the cache was full: drops are counted");
    s.assert_sound("floods").await;
    eprintln!(
        "hostile: 100,000 IPv6 in one /64 -> 10 x 200 + 99,990 x 429 in {v6_took:?}; 100,000 \
         header values -> store {} of {MEMORY_CAPACITY} in {rot_took:?}; 3,000 penalties -> \
         cache {} of {PENALTY_CAPACITY}, {} dropped",
        s.memory.len(),
        pc.len(),
        pc.dropped()
    );
}
