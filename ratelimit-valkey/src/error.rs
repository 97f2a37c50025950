//! Errors of building a backend.

use thiserror::Error;

/// Why a [`ValkeyBackend`](crate::ValkeyBackend) could not be built.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not a `redis://`, `rediss://`, `valkey://` or `valkeys://` URL.
    #[error("invalid Valkey URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `rediss://` / `valkeys://` URL without the `tls` feature.
    #[error("TLS URL {0:?} needs the `tls` feature of ratelimit-valkey")]
    TlsDisabled(String),
    /// A setting is out of range.
    #[error("invalid setting {name}: {reason}")]
    InvalidSetting {
        /// The builder method.
        name: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// With [`require_connection`](crate::ValkeyBuilder::require_connection):
    /// Valkey could not be reached, or its hash key not read, within the
    /// connect time-out.
    #[error("valkey at {addr}: {reason}")]
    Connect {
        /// The node's `host:port`.
        addr: String,
        /// What failed, e.g. `connection refused`.
        reason: String,
    },
    /// With [`require_connection`](crate::ValkeyBuilder::require_connection)
    /// in cluster mode: the slot map could not be read from any seed node
    /// within the connect time-out.
    #[error("valkey cluster: cannot read the slot map: {0}")]
    Topology(String),
}
