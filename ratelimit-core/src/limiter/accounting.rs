//! [`Accounting`]: response accounting, what happens after the upstream
//! answered a request the limiter forwarded.
//!
//! Count rules (`count_statuses`) count the upstream's status
//! (`respond.rs`); rules with `charge: response` are charged what the
//! response cost (`charge.rs`). Each of those files is an
//! `impl Accounting<'_>` block; [`Limiter::record_response`] and
//! [`Limiter::charge`] are one-line delegations (`front.rs`).
//!
//! Accounting reads the published rules, the clock, the backend, the count
//! store, the decision's caches and the stats, and never calls back up
//! into the [`Limiter`]: what it needs of a rule (its statistics, whether
//! it blocks) travels in the ticket or is read from the published set.

use std::sync::Arc;

use super::{Inner, Limiter};

/// Response accounting of one [`Limiter`], borrowed for a call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accounting<'a> {
    /// The limiter's shared parts. Held as the `Arc` so that a charge the
    /// backend answers later keeps them alive in its future.
    pub(super) inner: &'a Arc<Inner>,
}

impl<'a> Accounting<'a> {
    /// The response accounting of `front`.
    #[inline]
    pub(super) fn new(front: &'a Limiter) -> Self {
        Self {
            inner: &front.inner,
        }
    }
}
