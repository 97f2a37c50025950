//! In-process storage: the bounded LRU map and the in-memory backend.

// The bounded map keeps its whole API; not every method has a caller here.
#[allow(dead_code)]
mod lru;
mod memory;
mod sharded;

pub(crate) use lru::{Inserted, Lru, WhenFull};
pub use memory::MemoryBackend;
pub(crate) use sharded::Sharded;
