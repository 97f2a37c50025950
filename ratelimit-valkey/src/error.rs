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
    /// Valkey could not be reached or refused a command while connecting.
    #[error("cannot connect to Valkey: {0}")]
    Connect(#[from] redis::RedisError),
    /// The cluster's slot map could not be read from any seed node.
    #[error("cannot read the cluster's slots: {0}")]
    Topology(String),
}
