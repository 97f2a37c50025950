//! Where states are kept: the store seam below [`Backend`](crate::backend::Backend)
//! ([`State`], [`step`], [`StateStore`], [`StoreBackend`]), the in-memory
//! backend built on it, and the bounded map (`Lru`, sharded as `Sharded`)
//! that every in-process table of the core uses (the in-memory backend,
//! the penalty cache, the local stores, the backstop).
//!
//! # Writing a backend
//!
//! A backend that keeps states (a map, an embedded database, shared
//! memory) needs no algorithm of its own:
//!
//! 1. implement [`StateStore`] on your store: `measure_and_replace` runs a
//!    function on one key's [`State`] and keeps what it returns, under the
//!    key's lock; `remove` forgets a key;
//! 2. wrap it in a [`StoreBackend`], which is a
//!    [`Backend`](crate::backend::Backend): every check is [`step`] on its
//!    subject's state (the five algorithms, counting, probing and charging,
//!    the penalty), `peek` and `reset` included;
//! 3. give it to the limiter (`Limiter::builder(rules).backend(...)`), and
//!    run the backend-generic suite on it (`ratelimit_testkit::scenarios!`).
//!
//! `ratelimit-core/tests/hashmap_backend.rs` is such a backend, over a
//! `Mutex<HashMap>`, in under 70 lines, and passes the whole suite. A state
//! past its [`expires_at_ms`](State::expires_at_ms) answers as none: a
//! store may drop it then (a TTL).
//!
//! A backend that computes the algorithms elsewhere (the Valkey backend
//! runs Lua scripts next to the data, one round trip a request)
//! implements [`Backend`](crate::backend::Backend) itself, and reads what
//! a check needs from the [`Check`](crate::backend::Check): its
//! algorithm, quota, penalty, bit and mode.

// The bounded map keeps its whole API; not every method has a caller here.
#[allow(dead_code)]
mod lru;
mod memory;
mod sharded;
mod state;
mod state_store;
mod states;

pub(crate) use lru::{CacheLine, HalfLine, Inserted, Lru, WhenFull, IDLE_MAX};
pub use memory::MemoryBackend;
pub(crate) use sharded::Sharded;
pub use state::{step, State};
pub use state_store::{StateStore, StoreBackend};
pub(crate) use states::States;
