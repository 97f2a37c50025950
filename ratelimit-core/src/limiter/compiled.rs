//! The compiled plan: a rule set whose whole work per request is known when
//! it is published says so in data (`Published::compiled`), and the one
//! decision path reads it.
//!
//! Today's one plan: the set's only rule is a plain site-wide rule keyed on
//! the client address (`"expression": "true"`, `"key": ["ip"]`; no expiry,
//! allow list, distinct value, canary, `count_statuses` or
//! `charge: response`), the shape of a per-IP limiter. Every request then
//! runs exactly that rule. Selection (`Selector::select`) picks it without
//! the loops over the three rule groups; everything else (the backstop,
//! the emergency switches, the keys, the caches, the backend call,
//! settling the answer, the wait for a backend that does I/O) is the same
//! code for every set, so there is one executor and the plan is only what
//! it selects. The differential proptest in `compiled/tests.rs` runs random
//! rule sets with and without the plan and compares verdicts, stats and
//! stored state.
//!
//! Every backend, the in-memory one included, answers the plan's check
//! through the same seam as any batch ([`Backend::check_now_each`], else
//! [`Backend::check`]): the limiter never asks which backend it has.
//!
//! [`Backend::check_now_each`]: crate::backend::Backend::check_now_each
//! [`Backend::check`]: crate::backend::Backend::check

use std::sync::Arc;

use super::pipeline::Pipeline;
use super::published::{Entry, Published};

impl Pipeline<'_> {
    /// The rule the compiled plan of `published` runs, if it has one.
    #[inline(always)]
    pub(super) fn compiled<'p>(&self, published: &'p Published) -> Option<&'p Arc<Entry>> {
        #[cfg(test)]
        if self.inner.general_only {
            return None;
        }
        published.compiled.as_ref()
    }
}

#[cfg(test)]
mod tests;
