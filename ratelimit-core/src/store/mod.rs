//! Where states are kept: the store seam below [`Backend`](crate::backend::Backend)
//! ([`State`], [`State::step`], [`StateStore`], [`StoreBackend`]; for a store
//! outside the process [`RemoteStore`] and [`RemoteBackend`]; re-exported in
//! [`backend`](crate::backend), whose docs say how to write a backend with
//! them), the in-memory backend built on it, and the bounded map (`Lru`,
//! sharded as `Sharded`) that every in-process table of the core uses (the
//! in-memory backend, the penalty cache, the local stores, the backstop),
//! and [`BoundedTable`], that map reserved whole, for `ratelimit-nginx`'s zones.

mod bounded;
// The bounded map keeps its whole API; not every method has a caller here.
#[allow(dead_code)]
mod lru;
mod memory;
mod remote;
mod sharded;
mod state;
mod state_store;
mod states;

pub use bounded::BoundedTable;
pub(crate) use lru::{CacheLine, HalfLine, Inserted, Lru, WhenFull, IDLE_MAX};
pub use memory::MemoryBackend;
pub use remote::{RemoteBackend, RemoteStore, Stored, REMOTE_TRIES};
pub(crate) use sharded::Sharded;
pub use state::{State, StateDecodeError};
pub use state_store::{StateStore, StoreBackend};
pub(crate) use states::States;
