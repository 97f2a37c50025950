//! [`CheckMode`]: what one check does to a subject's state. The pure
//! algorithms take it; a [`Check`](crate::backend::Check) carries it.

/// What a [`Check`](crate::backend::Check) does to the subject's state.
///
/// Rules with `charge: response` are asked at request time with
/// [`CheckMode::Probe`] and charged with [`CheckMode::Charge`] once the
/// response says what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CheckMode {
    /// Counts `quota.cost` when it fits (refused requests count nothing);
    /// over the limit, starts the penalty.
    #[default]
    Count,
    /// Decides as [`CheckMode::Count`] would for `quota.cost`, but counts
    /// nothing and starts no penalty; a running penalty still refuses.
    /// Admitted, it answers the budget as it found it: `remaining` and
    /// `reset_ms` are what a count of cost 0 would answer (the probe counted
    /// nothing, so the `RateLimit` header is the state before the request).
    Probe,
    /// Adds `quota.cost` whether or not it fits: the total may pass the
    /// limit, and later requests are refused until the algorithm frees room
    /// again. `allowed` says whether the total is still within the limit;
    /// when it is not, `retry_after_ms` is the wait until a request of cost
    /// 1 fits, and a rule with a penalty starts it. A running penalty is
    /// left as it is and nothing is added.
    Charge,
}
