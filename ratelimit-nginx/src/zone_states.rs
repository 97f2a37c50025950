//! What both kinds of zone are besides their states' meaning: the name,
//! the key, the size and the hash key, and the states themselves in core's
//! [`BoundedTable`], reserved whole when the zone is made. Also the code
//! they share to turn a request into the digest that keys them, and the
//! public accessors both zone types have (`zone_accessors!`).

use std::fmt;
use std::mem::size_of;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ratelimit_core::{BoundedTable, HashKey, KeyDigest};

use super::error::{ConfigError, ConfigErrorKind};
use super::key::{KeySource, KeyTemplate};
use super::size::ZoneSize;

/// The states of a zone under its lock, with `X`, what the zone keeps
/// beside them under the same lock.
#[derive(Debug)]
pub(crate) struct Locked<V, X> {
    pub(crate) table: BoundedTable<V>,
    pub(crate) extra: X,
}

/// A zone's configuration and its states.
pub(crate) struct ZoneStates<V, X = ()> {
    pub(crate) name: String,
    pub(crate) key: KeyTemplate,
    pub(crate) size: ZoneSize,
    hash_key: HashKey,
    inner: Mutex<Locked<V, X>>,
}

impl<V, X> ZoneStates<V, X> {
    /// A zone holding `size / state_bytes` states, allocated now.
    pub(crate) fn new(
        name: &str,
        key: KeyTemplate,
        size: ZoneSize,
        hash_key: HashKey,
        state_bytes: u64,
        extra: X,
    ) -> Result<Self, ConfigError> {
        let states = size.validate_for(state_bytes)?;
        let table = BoundedTable::with_capacity(states as usize).map_err(|e| {
            ConfigError::new(
                ConfigErrorKind::Allocation,
                format!("cannot allocate zone \"{name}\": {e}"),
            )
        })?;
        Ok(Self {
            name: name.to_owned(),
            key,
            size,
            hash_key,
            inner: Mutex::new(Locked { table, extra }),
        })
    }

    /// The states, locked. A poisoned lock is recovered: the table's
    /// invariants hold between operations.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Locked<V, X>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most states.
    pub(crate) fn capacity(&self) -> u32 {
        u32::try_from(self.lock().table.capacity()).unwrap_or(u32::MAX)
    }

    /// The states in use.
    pub(crate) fn len(&self) -> u32 {
        u32::try_from(self.lock().table.len()).unwrap_or(u32::MAX)
    }

    /// The bytes of the zone (`Z`, the zone type holding this) without its
    /// configuration: its header and the states' table.
    pub(crate) fn memory_bytes<Z>(&self) -> usize {
        size_of::<Z>() - size_of::<BoundedTable<V>>() + self.lock().table.memory_bytes()
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

    /// A `Debug` of the zone type `name`: its name, key, size and `len`.
    pub(crate) fn debug<'a, 'b: 'a>(
        &self,
        f: &'a mut fmt::Formatter<'b>,
        name: &str,
    ) -> fmt::DebugStruct<'a, 'b> {
        let mut d = f.debug_struct(name);
        d.field("name", &self.name)
            .field("key", &self.key.as_str())
            .field("size", &self.size)
            .field("len", &self.len());
        d
    }
}

/// The accessors both zone types have, over their `states` field
/// (a [`ZoneStates`]); `$per` is the bytes of one state.
macro_rules! zone_accessors {
    ($zone:ident, $per:literal) => {
        impl $zone {
            /// The zone name.
            pub fn name(&self) -> &str {
                &self.states.name
            }

            /// The key of the zone.
            pub fn key(&self) -> &KeyTemplate {
                &self.states.key
            }

            /// The configured size.
            pub fn size(&self) -> ZoneSize {
                self.states.size
            }

            #[doc = concat!("The number of states the zone holds at most (`size / ", $per, "`).")]
            pub fn capacity(&self) -> u32 {
                self.states.capacity()
            }

            /// The number of states in use.
            pub fn len(&self) -> u32 {
                self.states.len()
            }

            /// True when no state is in use.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The bytes reserved for the states: the table and the zone header.
            ///
            /// Like nginx's shared zone, this excludes the configuration (name and key text).
            pub fn memory_bytes(&self) -> usize {
                self.states.memory_bytes::<Self>()
            }
        }
    };
}

pub(crate) use zone_accessors;
