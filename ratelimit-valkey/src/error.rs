//! Errors of building a backend.

use std::fmt;

use thiserror::Error;

/// Why a [`ValkeyBackend`](crate::ValkeyBackend) could not be built.
///
/// `{:?}` is the `Display` form (`valkey at 127.0.0.1:6379: connection
/// refused`), so that an error returned from `main` with `?` prints as a
/// sentence; `{:#?}` shows the variant and its fields (or match on it).
#[derive(Error)]
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

/// The `Display` form; `{:#?}` the variant and its fields.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            Error::InvalidUrl { url, reason } => f
                .debug_struct("InvalidUrl")
                .field("url", url)
                .field("reason", reason)
                .finish(),
            Error::TlsDisabled(url) => f.debug_tuple("TlsDisabled").field(url).finish(),
            Error::InvalidSetting { name, reason } => f
                .debug_struct("InvalidSetting")
                .field("name", name)
                .field("reason", reason)
                .finish(),
            Error::Connect { addr, reason } => f
                .debug_struct("Connect")
                .field("addr", addr)
                .field("reason", reason)
                .finish(),
            Error::Topology(why) => f.debug_tuple("Topology").field(why).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27, item 10: `main` prints an error returned with `?` as
    /// `{:?}`.
    #[test]
    fn debug_reads_as_display_and_alternate_shows_the_fields() {
        let e = Error::Connect {
            addr: "127.0.0.1:6379".into(),
            reason: "connection refused".into(),
        };
        assert_eq!(
            format!("{e:?}"),
            "valkey at 127.0.0.1:6379: connection refused"
        );
        assert_eq!(
            format!("{e:#?}"),
            "Connect {\n    addr: \"127.0.0.1:6379\",\n    reason: \"connection refused\",\n}"
        );
    }
}
