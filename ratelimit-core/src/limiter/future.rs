//! [`VerdictFuture`]: what [`Limiter::check`](super::Limiter::check)
//! returns, ready at once when the backend answered without waiting.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::backend::BoxFuture;
use crate::Verdict;

/// The verdict of [`Limiter::check`](super::Limiter::check).
///
/// The limiter decides as much as it can when `check` is called: with a
/// backend that answers without I/O ([`Backend::check_now`], the in-memory
/// store) the verdict is already there, no future was boxed, and
/// [`VerdictFuture::into_ready`] takes it out without polling. With a
/// backend that waits on the network, the rest of the decision is one boxed
/// future that owns what it needs (`'static`, `Send`).
///
/// Polling it after it completed returns `Pending` forever.
///
/// [`Backend::check_now`]: crate::backend::Backend::check_now
///
/// # Examples
///
/// ```
/// use ratelimit_core::{Limiter, RequestAttrs};
/// use ratelimit_core::rules::RuleSet;
///
/// let rules = RuleSet::from_json(r#"[{"id": "per-ip", "expression": "true",
///     "algorithm": "fixed_window", "limit": 10, "period": "1m", "key": ["ip"]}]"#).unwrap();
/// let limiter = Limiter::new(rules);
/// let req = RequestAttrs::new("203.0.113.7".parse().unwrap());
/// // The in-memory backend answers at once: no runtime needed.
/// let verdict = limiter.check(&req).into_ready().unwrap();
/// assert!(verdict.is_forward());
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct VerdictFuture {
    state: State,
}

enum State {
    Ready(Option<Verdict>),
    Waiting(BoxFuture<'static, Verdict>),
}

impl VerdictFuture {
    pub(crate) fn ready(verdict: Verdict) -> Self {
        Self {
            state: State::Ready(Some(verdict)),
        }
    }

    pub(crate) fn waiting(future: BoxFuture<'static, Verdict>) -> Self {
        Self {
            state: State::Waiting(future),
        }
    }

    /// Whether the verdict is already decided (polling answers at once).
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready(Some(_)))
    }

    /// The verdict if it is already decided, else the future itself, to
    /// be awaited.
    ///
    /// # Errors
    ///
    /// The backend has not answered yet: the future is given back.
    pub fn into_ready(self) -> Result<Verdict, Self> {
        match self.state {
            State::Ready(Some(v)) => Ok(v),
            state => Err(Self { state }),
        }
    }
}

impl Future for VerdictFuture {
    type Output = Verdict;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Verdict> {
        match &mut self.state {
            State::Ready(v) => match v.take() {
                Some(v) => Poll::Ready(v),
                None => Poll::Pending,
            },
            State::Waiting(f) => {
                let v = std::task::ready!(f.as_mut().poll(cx));
                self.state = State::Ready(None);
                Poll::Ready(v)
            }
        }
    }
}

impl fmt::Debug for VerdictFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerdictFuture")
            .field("ready", &self.is_ready())
            .finish_non_exhaustive()
    }
}
