//! The selection caps: how many rules of each kind one request runs. A
//! rule set is validated against them (at most [`MAX_SITE_WIDE`] site-wide
//! rules; a warning when more than [`MAX_OTHER_RULES`] blocking rules can
//! match one request) and the limiter's selection applies them.

/// Most site-wide rules in a set (every one runs on every request).
pub(crate) const MAX_SITE_WIDE: usize = 2;
/// Most non-site-wide rules a request runs.
pub(crate) const MAX_OTHER_RULES: usize = 5;
/// Most count rules a request runs.
pub(crate) const MAX_COUNT_RULES: usize = 5;
