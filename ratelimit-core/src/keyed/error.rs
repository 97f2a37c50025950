//! Why a keyed call failed: what retrying cannot fix soon.

use std::fmt;
use std::time::Duration;

use crate::backend::BackendError;

/// Why a keyed call got no decision.
///
/// A refusal within the quota is not an error: it is a
/// [`KeyedDecision`](super::KeyedDecision) that says when to retry.
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence; `{:#?}` shows the variant and its
/// fields (or match on it).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyedError {
    /// No published rule has this id.
    UnknownRule(String),
    /// The rule cannot count keyed calls: `distinct` rules count values of
    /// a request, count rules count responses.
    UnsupportedRule {
        /// The rule.
        id: String,
        /// Why not.
        reason: &'static str,
    },
    /// The cost is larger than the bucket (or the window's limit): the call
    /// can never be admitted, however long it waits.
    InsufficientCapacity {
        /// The cost asked.
        cost: u64,
        /// The most one call may cost.
        capacity: u64,
    },
    /// The backend could not answer and the fail mode is `closed` (or the
    /// backend failed a peek or a reset).
    Backend(BackendError),
    /// From the waiting calls only: the earliest admission is further away
    /// than what is left of `max_wait`. Nothing was slept for it.
    WaitTooLong {
        /// How long the call would have had to wait from now.
        wait: Duration,
        /// The wait the caller allowed, in all.
        max_wait: Duration,
    },
}

impl fmt::Display for KeyedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyedError::UnknownRule(id) => write!(f, "no rule {id:?}"),
            KeyedError::UnsupportedRule { id, reason } => {
                write!(f, "rule {id:?} cannot count keyed calls: {reason}")
            }
            KeyedError::InsufficientCapacity { cost, capacity } => {
                write!(f, "cost {cost} can never fit: at most {capacity} at once")
            }
            KeyedError::Backend(e) => write!(f, "backend: {e}"),
            KeyedError::WaitTooLong { wait, max_wait } => write!(
                f,
                "admission is {} ms away, past the wait of {} ms allowed",
                wait.as_millis(),
                max_wait.as_millis()
            ),
        }
    }
}

/// The `Display` form; `{:#?}` the variant and its fields.
impl fmt::Debug for KeyedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            KeyedError::UnknownRule(id) => f.debug_tuple("UnknownRule").field(id).finish(),
            KeyedError::UnsupportedRule { id, reason } => f
                .debug_struct("UnsupportedRule")
                .field("id", id)
                .field("reason", reason)
                .finish(),
            KeyedError::InsufficientCapacity { cost, capacity } => f
                .debug_struct("InsufficientCapacity")
                .field("cost", cost)
                .field("capacity", capacity)
                .finish(),
            KeyedError::Backend(e) => f.debug_tuple("Backend").field(e).finish(),
            KeyedError::WaitTooLong { wait, max_wait } => f
                .debug_struct("WaitTooLong")
                .field("wait", wait)
                .field("max_wait", max_wait)
                .finish(),
        }
    }
}

impl std::error::Error for KeyedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KeyedError::Backend(e) => Some(e),
            _ => None,
        }
    }
}
