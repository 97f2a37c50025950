//! The periodic check of the fleet's hash key without a restart (issue
//! 27, item 1): a deleted key is written back, a replaced one adopted, and
//! a configured key that differs from the stored one kept; each logged
//! and counted in `ratelimit_valkey_hash_key_total{event}`. One test in
//! this binary: it installs the global recorder.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use ratelimit_core::backend::Backend;
use ratelimit_core::HashKey;
use ratelimit_testkit::log_capture::LogCapture;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect as raw, spawned};
use ratelimit_valkey::ValkeyBackend;
use tracing::Level;

/// `ratelimit_valkey_hash_key_total{event}` so far, by event (a snapshot
/// of the debugging recorder drains its counters: they are summed here).
#[derive(Clone)]
struct Events {
    snapshots: Arc<Snapshotter>,
    seen: Arc<Mutex<HashMap<String, u64>>>,
}

impl Events {
    fn get(&self, event: &str) -> u64 {
        let mut seen = self.seen.lock().expect("seen");
        for (k, _, _, v) in self.snapshots.snapshot().into_vec() {
            if k.key().name() != "ratelimit_valkey_hash_key_total" {
                continue;
            }
            let DebugValue::Counter(n) = v else {
                panic!("{v:?}")
            };
            for l in k.key().labels().filter(|l| l.key() == "event") {
                *seen.entry(l.value().to_owned()).or_default() += n;
            }
        }
        seen.get(event).copied().unwrap_or(0)
    }
}

/// Runs `cmd` on `url`.
async fn run(url: &str, cmd: &mut redis::Cmd) {
    let mut conn = raw(url).await;
    let _: redis::Value = cmd.query_async(&mut conn).await.expect("command");
}

/// Waits up to 8 s (the check runs every 5 s) for `done`.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while !done() && start.elapsed() < Duration::from_secs(8) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

// One thread: the backend's tasks log through this test's subscriber.
#[tokio::test]
async fn a_deleted_key_is_written_back_a_replaced_one_adopted_a_configured_one_kept() {
    let recorder = DebuggingRecorder::new();
    let events = Events {
        snapshots: Arc::new(recorder.snapshotter()),
        seen: Arc::default(),
    };
    recorder
        .install()
        .expect("the only recorder of this binary");
    let (capture, _guard) = LogCapture::install();
    let server = spawned();
    let url = server.url();
    let prefix = unique("hc");
    let name = format!("{prefix}hashkey");
    let a = ValkeyBackend::builder(url)
        .key_prefix(&prefix)
        .require_connection(true)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = a.hash_key().expect("read at build");

    // A configured key that differs from the stored one: kept, logged.
    let mine = HashKey::new([7; 16]);
    let configured = ValkeyBackend::builder(url)
        .key_prefix(&prefix)
        .hash_key(mine)
        .require_connection(true)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(configured.hash_key(), Some(mine));
    assert!(events.get("conflict") >= 1, "counted at its first check");
    let conflict = capture.with_at_least(Level::INFO, "differs from the one configured");
    assert_eq!(conflict.len(), 1, "{conflict:?}");
    assert!(conflict[0].starts_with("WARN"), "{conflict:?}");
    drop(configured);

    // Deleted (a FLUSHALL): A writes its key back.
    run(url, redis::cmd("DEL").arg(&name)).await;
    assert!(
        eventually(|| events.get("written_back") == 1).await,
        "written back"
    );
    assert_eq!(a.hash_key(), Some(key));
    assert_eq!(capture.with_at_least(Level::INFO, "written back").len(), 1);

    // Replaced by another instance's: A adopts it.
    let other = "00112233445566778899aabbccddeeff";
    run(url, redis::cmd("SET").arg(&name).arg(other)).await;
    let new = HashKey::new([
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ]);
    assert!(
        eventually(|| a.hash_key() == Some(new)).await,
        "A adopted the stored key"
    );
    assert_eq!(events.get("adopted"), 1);
    let adopted = capture.with_at_least(Level::INFO, "adopted");
    assert_eq!(adopted.len(), 1, "{adopted:?}");
    assert!(adopted[0].starts_with("WARN"), "{adopted:?}");
    assert!(
        !adopted[0].contains(other),
        "the key is never logged: {adopted:?}"
    );
}
