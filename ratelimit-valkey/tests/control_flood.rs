//! A flood of notices costs a bounded number of reads of the control state
//! (issue 39, "Also"): 45,000 notices, 3,000 every 300 ms as the issue
//! sent them, make at most about one read per `FLOOD_GAP` per instance
//! (there were about 2,900 per instance), and a publish in the middle of
//! the flood still reaches every instance. Counted, not timed: the
//! latency figure is the `notice_flood` bench's.
#![allow(clippy::print_stderr)] // prints the counts, for the issue notes

mod control_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use control_common::{api_set, fleet, wait_until};
use ratelimit_core::control::Control;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use ratelimit_valkey::control::FLOOD_GAP;

const BATCHES: u32 = 15;
const PER_BATCH: u32 = 3_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_45000_notices_makes_a_bounded_number_of_reads() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let prefix = unique("flood");
    let fleet = fleet(server.url(), &prefix).await;
    wait_until("subscribed", Duration::from_secs(2), || {
        fleet.iter().all(|n| n.follower.reads() > 0)
    })
    .await;
    let before: Vec<u64> = fleet.iter().map(|n| n.follower.reads()).collect();
    let channel = format!("{prefix}control{{ctl}}:notice");
    let mut conn = connect(server.url()).await;
    let start = Instant::now();
    let flood = tokio::spawn(async move {
        for b in 0..BATCHES {
            let mut pipe = redis::pipe();
            for i in 0..PER_BATCH {
                pipe.cmd("PUBLISH")
                    .arg(&channel)
                    .arg(b * PER_BATCH + i)
                    .ignore();
            }
            let () = pipe.query_async(&mut conn).await.unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });

    // A publish in the middle of the flood reaches every instance.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let v = fleet[0]
        .control
        .publish(0, &api_set(4, "log"), "during the flood", BTreeMap::new())
        .await
        .unwrap();
    let took = wait_until(
        "the publish during the flood",
        Duration::from_secs(2),
        || fleet.iter().all(|n| n.follower.running_version() == v),
    )
    .await;

    flood.await.unwrap();
    let total = u64::from(BATCHES * PER_BATCH);
    wait_until("every notice arrives", Duration::from_secs(10), || {
        fleet.iter().all(|n| n.follower.notices() >= total)
    })
    .await;
    let elapsed = start.elapsed();
    // A read per gap while notices keep arriving during reads; one that
    // starts at once per batch (after a quiet moment); the polls (200 ms)
    // in the quiet moments.
    let ms = elapsed.as_millis();
    let bound = ms / FLOOD_GAP.as_millis() + ms / 200 + u128::from(BATCHES) + 2;
    for (n, before) in fleet.iter().zip(before) {
        let reads = u128::from(n.follower.reads() - before);
        assert!(
            reads <= bound,
            "{}: {reads} reads for {total} notices in {elapsed:?} (bound {bound})",
            n.id
        );
        eprintln!(
            "{}: {reads} reads for {total} notices in {elapsed:?}; the publish applied in {took:?}",
            n.id
        );
    }
}
