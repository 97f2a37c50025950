//! In-process storage: the bounded map (`Lru`, sharded as `Sharded`)
//! that every in-process table of the core uses (the in-memory backend,
//! the penalty cache, the local stores, the backstop), and the in-memory
//! backend.

// The bounded map keeps its whole API; not every method has a caller here.
#[allow(dead_code)]
mod lru;
mod memory;
mod sharded;
mod states;

pub(crate) use lru::{CacheLine, HalfLine, Inserted, Lru, WhenFull, IDLE_MAX};
pub use memory::MemoryBackend;
pub(crate) use sharded::Sharded;
pub(crate) use states::States;
