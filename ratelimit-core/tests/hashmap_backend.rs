//! A whole backend in a few lines: a `HashMap` of states behind a mutex,
//! made a [`Backend`] by [`StoreBackend`], which runs the core's algorithms
//! (`State::step`) on each check's state. It passes the whole
//! backend-generic suite (`ratelimit_testkit::scenarios!`), as the
//! in-memory and Valkey backends do. The `backend` module's docs ("Writing a
//! backend") and DEVELOPERS.md ("Adding a backend") walk through it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ratelimit_core::backend::{Backend, State, StateStore, StoreBackend};
use ratelimit_core::KeyDigest;
use ratelimit_testkit::scenarios::{Backends, Outage, Probe};

/// Every subject's state, by its state key; nothing is ever evicted.
#[derive(Debug, Default)]
struct MapStore(Mutex<HashMap<KeyDigest, State>>);

impl StateStore for MapStore {
    fn measure_and_replace<T>(
        &self,
        key: &KeyDigest,
        now_ms: u64,
        f: impl FnOnce(Option<&State>) -> (T, Option<State>),
    ) -> T {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A state past its expiry answers as none: drop it.
        if map.get(key).is_some_and(|s| s.expires_at_ms() <= now_ms) {
            map.remove(key);
        }
        let (answer, new) = f(map.get(key));
        if let Some(state) = new {
            map.insert(*key, state);
        }
        answer
    }

    fn remove(&self, key: &KeyDigest) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }
}

/// The scenarios' factory: a fresh map each time, one map shared by two
/// "instances", and a [`Probe`] in front of one to take it down.
struct MapBackends;

fn map_backend() -> Arc<dyn Backend> {
    Arc::new(StoreBackend::new(MapStore::default()))
}

impl Backends for MapBackends {
    async fn fresh(&self) -> Arc<dyn Backend> {
        map_backend()
    }

    async fn pair(&self) -> [Arc<dyn Backend>; 2] {
        let shared = map_backend();
        [shared.clone(), shared]
    }

    async fn breakable(&self) -> (Arc<dyn Backend>, Box<dyn Outage>) {
        let probe = Arc::new(Probe::new(map_backend()));
        (probe.clone(), Box::new(probe))
    }
}

ratelimit_testkit::scenarios!(MapBackends);
