//! In-process storage: the bounded map ([`Lru`], sharded as [`Sharded`])
//! that every in-process table of the core uses (the in-memory backend,
//! the penalty cache, the local stores, the backstop), and the in-memory
//! backend.

mod lru;
mod memory;
mod sharded;

pub use lru::{CacheLine, Entry, Inserted, Lru, WhenFull};
pub use memory::{MemoryBackend, DEFAULT_CAPACITY};
pub use sharded::Sharded;
