//! What both kinds of zone hold besides their states: the name, the key,
//! the size and the hash key, with the code they share to allocate the
//! states and to turn a request into the digest that keys them.

use std::fmt;
use std::sync::Arc;

use ratelimit_core::{HashKey, KeyDigest};

use super::error::Span;
use super::error::{ConfigError, ConfigErrorKind};
use super::key::{KeySource, KeyTemplate};
use super::size::ZoneSize;
use super::table::Table;

/// The configuration part of a zone.
pub(crate) struct ZoneHead {
    pub(crate) name: String,
    pub(crate) key: KeyTemplate,
    pub(crate) size: ZoneSize,
    hash_key: HashKey,
}

impl ZoneHead {
    pub(crate) fn new(name: &str, key: KeyTemplate, size: ZoneSize, hash_key: HashKey) -> Self {
        Self {
            name: name.to_owned(),
            key,
            size,
            hash_key,
        }
    }

    /// The preallocated states: `size / state_bytes` of them.
    pub(crate) fn table<V>(&self, state_bytes: u64) -> Result<Table<V>, ConfigError> {
        let states = self.size.validate_for(state_bytes)?;
        Table::with_capacity(states).map_err(|e| {
            ConfigError::new(
                ConfigErrorKind::Allocation,
                format!("cannot allocate zone \"{}\": {e}", self.name),
            )
        })
    }

    /// The digest of a rendered key.
    pub(crate) fn digest(&self, key: &[u8]) -> KeyDigest {
        self.hash_key.digest(key)
    }

    /// The digest of the request's key, rendered into `buf`; `None` when the
    /// key comes out empty (nginx does not count such a request).
    pub(crate) fn digest_of(&self, src: &dyn KeySource, buf: &mut Vec<u8>) -> Option<KeyDigest> {
        buf.clear();
        self.key.render_into(src, buf);
        (!buf.is_empty()).then(|| self.digest(buf))
    }
}

impl fmt::Debug for ZoneHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZoneHead")
            .field("name", &self.name)
            .field("key", &self.key.as_str())
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// Binds each limit directive of a level to its zone, in order: the part of
/// `LimitReqPolicy::resolve` and `LimitConnPolicy::resolve` they share.
/// `directive` is `limit_req` or `limit_conn`; an unknown zone is an error
/// at the directive's position.
pub(crate) fn bind_zones<D, Z, L>(
    directives: &[D],
    directive: &str,
    name_and_span: impl Fn(&D) -> (&str, Option<Span>),
    zone: impl Fn(&str) -> Option<Arc<Z>>,
    limit: impl Fn(&D, Arc<Z>) -> L,
) -> Result<Vec<L>, ConfigError> {
    let mut limits = Vec::with_capacity(directives.len());
    for d in directives {
        let (name, span) = name_and_span(d);
        let Some(zone) = zone(name) else {
            return Err(ConfigError::new(
                ConfigErrorKind::UnknownZone,
                format!("unknown {directive}_zone \"{name}\""),
            )
            .in_directive(directive)
            .at(span));
        };
        limits.push(limit(d, zone));
    }
    Ok(limits)
}
