//! A node's connection lost and restored is logged once per transition
//! (issue 27, item 2): `WARN valkey connection lost`, then `INFO valkey
//! connection restored`, each naming the node, however many connections
//! and attempts failed in between; and the hash key written back to the
//! restarted server is logged at `INFO`.
#![allow(clippy::print_stderr)] // prints what it measures, for the issue notes

use std::time::{Duration, Instant};

use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::log_capture::LogCapture;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{free_port, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

// One thread: the backend's tasks log through this test's subscriber.
#[tokio::test]
async fn a_restart_logs_one_loss_and_one_restore_per_node() {
    let (capture, _guard) = LogCapture::install();
    let port = free_port();
    let mut server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let backend = ValkeyBackend::builder(server.url())
        .key_prefix(unique("log"))
        .injected_time(true)
        .connections(3)
        .require_connection(true)
        .build()
        .await
        .expect("backend");
    let rule = RuleBuilder::new("api")
        .key(["ip"])
        .fixed_window(1000, Duration::from_secs(60))
        .build()
        .expect("rule");
    let check = check_of(&template().await, &rule, "203.0.113.7", 1, None);
    assert!(one(&backend, &check, T0).await.is_ok());
    assert!(capture.with("connection lost").is_empty());

    server.kill();
    // Calls fail (and the breaker opens) while the server is away; its
    // connections' tasks keep trying.
    for _ in 0..10 {
        assert!(one(&backend, &check, T0).await.is_err());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    while one(&backend, &check, T0).await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "never answered again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let start = Instant::now();
    // The restore wakes the check at once (the periodic one is 5 s away).
    while capture.with("written back").is_empty() && start.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "the key was written back {:?} after the first answer (the restore wakes the check)",
        start.elapsed()
    );

    let node = format!("node=127.0.0.1:{port}");
    let lost = capture.with("valkey connection lost");
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert!(
        lost[0].starts_with("WARN") && lost[0].contains(&node),
        "{lost:?}"
    );
    let restored = capture.with("valkey connection restored");
    assert_eq!(restored.len(), 1, "{restored:?}");
    assert!(
        restored[0].starts_with("INFO") && restored[0].contains(&node),
        "{restored:?}"
    );
    let noisy: Vec<String> = capture
        .with("cannot connect")
        .into_iter()
        .filter(|l| !l.starts_with("DEBUG"))
        .collect();
    assert!(noisy.is_empty(), "failed attempts after a loss: {noisy:?}");
    let back = capture.with("written back");
    assert_eq!(back.len(), 1, "{back:?}");
    assert!(back[0].starts_with("INFO"), "{back:?}");
}
