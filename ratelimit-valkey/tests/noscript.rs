//! `SCRIPT FLUSH` then a batch still works: the scripts are loaded again
//! (the batch script for a batch of several checks, an algorithm's script
//! for one check) and each check counts once.

use std::time::Duration;

use ratelimit_core::backend::{Backend, Batch};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, template, T0};
use ratelimit_testkit::valkey::{calls, connect, injected, server};

#[tokio::test]
async fn after_script_flush_a_batch_reloads_and_counts_once() {
    let server = server();
    let backend = injected(server.url()).await;
    let mut conn = connect(server.url()).await;
    let t = template().await;
    let fixed = RuleBuilder::new("a")
        .key(["ip"])
        .fixed_window(10, Duration::from_secs(60))
        .build()
        .expect("rule");
    let token = RuleBuilder::new("b")
        .key(["ip"])
        .token_bucket(10, Duration::from_secs(60), 10)
        .build()
        .expect("rule");
    let batch = Batch::new(
        T0,
        vec![
            check_of(&t, &fixed, "203.0.113.7", 1, None),
            check_of(&t, &token, "203.0.113.7", 1, None),
        ],
    );
    let first = backend.check(&batch).await;
    assert!(
        first
            .iter()
            .all(|r| r.as_ref().is_ok_and(|d| d.remaining == 9)),
        "{first:?}"
    );

    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut conn)
        .await
        .expect("flush");
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .expect("resetstat");
    let second = backend.check(&batch).await;
    // Counted once more, not twice: 10 - 2 = 8 left.
    for r in &second {
        assert_eq!(r.as_ref().map(|d| d.remaining), Ok(8), "{second:?}");
    }
    // One script call for the batch: it answered NOSCRIPT (did not run),
    // the batch script was loaded, the call ran.
    assert_eq!(calls(&mut conn, "script|load").await, 1, "the batch script");
    assert_eq!(calls(&mut conn, "evalsha").await, 2);

    // A batch of one check calls its algorithm's script, flushed too.
    let single = Batch::new(T0, vec![batch.checks[1].clone()]);
    let third = backend.check(&single).await;
    assert_eq!(third[0].as_ref().map(|d| d.remaining), Ok(7), "{third:?}");
    assert_eq!(
        calls(&mut conn, "script|load").await,
        2,
        "the token bucket's"
    );
    assert_eq!(calls(&mut conn, "evalsha").await, 4);
}
