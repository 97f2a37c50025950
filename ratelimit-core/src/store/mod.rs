//! In-process storage: the bounded LRU map and the in-memory backend.

mod lru;
mod memory;
mod sharded;

pub use lru::{Inserted, Lru, WhenFull};
pub use memory::{MemoryBackend, DEFAULT_CAPACITY};
pub use sharded::Sharded;
