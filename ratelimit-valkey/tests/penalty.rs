//! A penalty set through one instance is seen as "blocked", without
//! counting, by a second instance with its own connections.

use std::time::Duration;

use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, server};
use ratelimit_valkey::ValkeyBackend;

#[tokio::test]
async fn a_second_instance_sees_the_penalty_without_counting() {
    let server = server();
    let prefix = unique("p");
    let build = || {
        ValkeyBackend::builder(server.url())
            .key_prefix(&prefix)
            .injected_time(true)
            .deadline(Duration::from_millis(500))
            .build()
    };
    let (a, b) = (build().await.expect("a"), build().await.expect("b"));
    let mut conn = connect(server.url()).await;
    let rule = RuleBuilder::new("login")
        .key(["ip"])
        .sliding_window(5, Duration::from_secs(60))
        .penalty(Duration::from_secs(300))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.7", 1, None);
    for s in 0..5 {
        assert!(one(&a, &check, T0 + s * 1000).await.expect("ok").allowed);
    }
    let d = one(&a, &check, T0 + 5_000).await.expect("ok");
    assert_eq!((d.allowed, d.retry_after_ms), (false, 300_000));
    assert_eq!(d.blocked_until_ms, Some(T0 + 305_000));

    let key = b.key_of(&check);
    let before: redis::Value = redis::cmd("DUMP")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("dump");
    let seen = one(&b, &check, T0 + 70_000).await.expect("ok");
    assert!(!seen.allowed);
    assert_eq!(
        seen.retry_after_ms, 235_000,
        "seed: Retry-After 235 at 1:10"
    );
    assert_eq!(seen.blocked_until_ms, Some(T0 + 305_000));
    let after: redis::Value = redis::cmd("DUMP")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("dump");
    assert_eq!(before, after, "asking did not count");

    assert_eq!(
        one(&b, &check, T0 + 304_000)
            .await
            .expect("ok")
            .retry_after_ms,
        1_000
    );
    let fresh = one(&b, &check, T0 + 305_000).await.expect("ok");
    assert!(fresh.allowed, "penalty over; counting starts fresh");
    assert_eq!(fresh.remaining, 4);
}
