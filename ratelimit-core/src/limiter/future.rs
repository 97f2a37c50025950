//! [`VerdictFuture`]: what [`Limiter::check`](super::Limiter::check)
//! returns, and [`ChargeFuture`]: what
//! [`Limiter::charge`](super::Limiter::charge) returns; each ready at once
//! when the backend answered without waiting.

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

    /// The ready verdict, to decide in place (where the caller will find
    /// it: no copy of it on the way out).
    #[inline]
    pub(crate) fn ready_mut(&mut self) -> Option<&mut Verdict> {
        match &mut self.state {
            State::Ready(v) => v.as_mut(),
            State::Waiting(_) => None,
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
    #[inline]
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

/// The charge of [`Limiter::charge`](super::Limiter::charge): done at once
/// when the backend answered without waiting (the in-memory store), else
/// one boxed `'static` future that sends the charges and applies the
/// answers. Await it, `tokio::spawn` it (off the response's critical path),
/// or, when [`ChargeFuture::is_ready`], drop it: the charge is done.
///
/// Its output is `()`: a charge the backend could not take is logged and
/// counted, never returned. Dropping a waiting future before it completes
/// cancels the charge.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleSet;
/// use ratelimit_core::{Limiter, RequestAttrs};
///
/// let rules = RuleSet::from_json(r#"[{"id": "rows", "expression": "true",
///     "algorithm": "token_bucket", "limit": 100, "burst": 100, "period": "1s",
///     "key": ["ip"], "charge": "response"}]"#).unwrap();
/// let limiter = Limiter::new(rules);
/// let v = limiter
///     .check(&RequestAttrs::new("192.0.2.9".parse().unwrap()))
///     .into_ready()
///     .unwrap();
/// assert!(limiter.charge(&v.ticket, 40).is_ready());
/// ```
#[must_use = "a waiting charge is sent only when polled"]
pub struct ChargeFuture {
    waiting: Option<BoxFuture<'static, ()>>,
}

impl ChargeFuture {
    pub(crate) fn done() -> Self {
        Self { waiting: None }
    }

    pub(crate) fn waiting(future: BoxFuture<'static, ()>) -> Self {
        Self {
            waiting: Some(future),
        }
    }

    /// Whether the charge is already done (nothing left to await).
    pub fn is_ready(&self) -> bool {
        self.waiting.is_none()
    }
}

impl Future for ChargeFuture {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(f) = &mut self.waiting {
            std::task::ready!(f.as_mut().poll(cx));
            self.waiting = None;
        }
        Poll::Ready(())
    }
}

impl fmt::Debug for ChargeFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChargeFuture")
            .field("ready", &self.is_ready())
            .finish_non_exhaustive()
    }
}
