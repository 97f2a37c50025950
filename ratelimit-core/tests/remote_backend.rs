//! A store outside the process, as [`RemoteBackend`] sees one: a map of
//! encoded states with a version per key, whose every call awaits before it
//! touches the map (a network round trip), so that other checks run between
//! a check's read and its write. Compare-and-set keeps it exact; it passes
//! the whole backend-generic suite (`ratelimit_testkit::scenarios!`), as
//! the map backend of `hashmap_backend.rs` (a `StateStore`, no await) does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ratelimit_core::backend::{
    Backend, BackendError, BoxFuture, RemoteBackend, RemoteStore, Stored,
};
use ratelimit_core::{HashKey, KeyDigest};
use ratelimit_testkit::scenarios::{Backends, Outage, Probe};

/// Each key's bytes and version; versions count up per store. Clones
/// share the map (two instances of a fleet on one store).
#[derive(Debug, Default, Clone)]
struct RemoteMap(Arc<Mutex<Keys>>);

#[derive(Debug, Default)]
struct Keys {
    map: HashMap<KeyDigest, Stored>,
    last_version: u64,
}

impl RemoteMap {
    fn keys(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The round trip: the task gives way before the call reaches the map.
async fn network() {
    tokio::task::yield_now().await;
}

impl RemoteStore for RemoteMap {
    fn read<'a>(
        &'a self,
        key: &'a KeyDigest,
    ) -> BoxFuture<'a, Result<Option<Stored>, BackendError>> {
        Box::pin(async move {
            network().await;
            Ok(self.keys().map.get(key).cloned())
        })
    }

    fn write_if<'a>(
        &'a self,
        key: &'a KeyDigest,
        expected: Option<u64>,
        bytes: Vec<u8>,
        _expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<bool, BackendError>> {
        Box::pin(async move {
            network().await;
            let mut keys = self.keys();
            if keys.map.get(key).map(|s| s.version) != expected {
                return Ok(false);
            }
            keys.last_version += 1;
            let version = keys.last_version;
            keys.map.insert(*key, Stored::new(bytes, version));
            Ok(true)
        })
    }

    fn remove<'a>(&'a self, key: &'a KeyDigest) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            network().await;
            self.keys().map.remove(key);
            Ok(())
        })
    }
}

/// The scenarios' factory: a fresh store each time, one store shared by two
/// backends (two instances with the fleet's one hash key), and a [`Probe`]
/// in front of one to take it down.
struct RemoteBackends;

fn remote_backend() -> Arc<dyn Backend> {
    Arc::new(RemoteBackend::new(RemoteMap::default(), HashKey::random()))
}

impl Backends for RemoteBackends {
    async fn fresh(&self) -> Arc<dyn Backend> {
        remote_backend()
    }

    async fn pair(&self) -> [Arc<dyn Backend>; 2] {
        // Two backends, as two processes, on one store and one hash key.
        let (store, key) = (RemoteMap::default(), HashKey::random());
        let one = RemoteBackend::new(store.clone(), key);
        [Arc::new(one), Arc::new(RemoteBackend::new(store, key))]
    }

    async fn breakable(&self) -> (Arc<dyn Backend>, Box<dyn Outage>) {
        let probe = Arc::new(Probe::new(remote_backend()));
        (probe.clone(), Box::new(probe))
    }
}

ratelimit_testkit::scenarios!(RemoteBackends);

/// Bytes that are not a state of this format answer an error naming the
/// rule (the rule's fail mode decides), never a guess.
#[tokio::test]
async fn bytes_of_another_format_are_a_protocol_error_naming_the_rule() {
    use ratelimit_core::backend::{BackendErrorKind, Batch, Check};
    use ratelimit_core::rules::RuleBuilder;
    use std::time::Duration;

    let rule = RuleBuilder::new("login")
        .fixed_window(5, Duration::from_secs(60))
        .key(["ip"])
        .build()
        .expect("rule");
    let (ns, quota) = (Check::namespace_of(&rule).into(), rule.quota(1));
    let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
    let check = Check::new(Arc::new(rule), ns, subject, quota, None, None);
    let store = RemoteMap::default();
    let mut v2 = vec![2u8, 0];
    v2.extend([0u8; 32]);
    store.keys().map.insert(check.state_key, Stored::new(v2, 1));
    let backend = RemoteBackend::new(store, HashKey::DEFAULT);
    let answers = backend
        .check(&Batch::new(1_767_225_600_000, vec![check]))
        .await;
    let err = answers[0].clone().expect_err("not a version 1 state");
    assert_eq!(err.kind(), BackendErrorKind::Protocol);
    let text = err.to_string();
    assert!(
        text.contains("rule login") && text.contains("format version 2"),
        "{text}"
    );
}
