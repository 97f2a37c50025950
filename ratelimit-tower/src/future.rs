//! [`ResponseFuture`]: check, then call the inner service or answer.
//!
//! The future is kept small: the state of a request still being checked
//! (a backend with I/O) is boxed, a forwarded request holds only what its
//! verdict asks of the response ([`After`]), and the layer's own answers are
//! built when first polled. Every move of a future copies it: into a box
//! for axum's routes, into hyper's connection state, through each
//! `.await`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use http::{Request, Response};
use pin_project_lite::pin_project;
use ratelimit_core::limiter::VerdictFuture;
use ratelimit_core::{Outcome, Verdict};
use tower_service::Service;
use tracing::Span;

use crate::answer::{answered, charge_for, forwarded, passed, refused, After, Own};
use crate::grpc::is_grpc;
use crate::observe::observe;
use crate::shared::Shared;
use crate::{MakeResponse, ResponseBody};

pin_project! {
    /// The response future of [`RateLimit`](crate::RateLimit).
    ///
    /// Polling it after it completed returns `Pending` forever.
    pub struct ResponseFuture<S, ReqB, M>
    where
        S: Service<Request<ReqB>>,
    {
        #[pin]
        state: State<S, ReqB>,
        shared: Arc<Shared<M>>,
        // `None` while nobody listens (see `service::span_listened`); boxed
        // so that the future is 32 bytes smaller and its drop a null check
        // while nobody does.
        span: RequestSpan,
    }

    impl<S, ReqB, M> PinnedDrop for ResponseFuture<S, ReqB, M>
    where
        S: Service<Request<ReqB>>,
    {
        // Dropped while the inner service works (the client hung up):
        // what it added to its `Charge` is charged all the same.
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let StateProj::Calling {
                after, done: false, ..
            } = this.state.project()
            {
                after.cancelled(&this.shared.limiter);
            }
        }
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateTake]
    pub(crate) enum State<S, ReqB>
    where
        S: Service<Request<ReqB>>,
    {
        // The backend has not answered yet (a backend with I/O).
        Checking {
            checking: Box<Checking<S, ReqB>>,
        },
        // Answered (`done`), the state stays until the future is dropped:
        // one drop of it rather than one for a `Done` state and another.
        Calling {
            #[pin]
            future: S::Future,
            after: After,
            done: bool,
        },
        // Refused at once: the limiter's answer is built on the first poll.
        // The verdict is boxed: inline, it would set the size of every
        // future, forwarded ones too, past what a move copies without
        // calling `memcpy` (128 bytes), and a future is moved several
        // times.
        Refused {
            verdict: Box<Verdict>,
            grpc: bool,
        },
        // The layer's own answer, without asking the limiter.
        Answered {
            own: Own,
            grpc: bool,
        },
        Done,
    }
}

/// A request waiting for a backend with I/O, with the inner service that
/// will take it.
pub(crate) struct Checking<S, ReqB> {
    check: VerdictFuture,
    request: Request<ReqB>,
    inner: S,
}

impl<S, ReqB, M> ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    /// The future for a request the backend is still checking (it waits on
    /// I/O): it takes along `inner`, the instance driven to readiness, and
    /// leaves a clone in its place.
    pub(crate) fn checking(
        check: VerdictFuture,
        request: Request<ReqB>,
        inner: &mut S,
        shared: Arc<Shared<M>>,
        span: Option<Box<Span>>,
    ) -> Self
    where
        S: Clone,
    {
        let clone = inner.clone();
        let checking = Box::new(Checking {
            check,
            request,
            inner: std::mem::replace(inner, clone),
        });
        Self::with(State::Checking { checking }, shared, span)
    }

    /// The future for a forwarded request: `future` is the inner service's
    /// answer, `after` what the verdict asks of it.
    #[inline(always)]
    pub(crate) fn calling(
        future: S::Future,
        after: After,
        shared: Arc<Shared<M>>,
        span: Option<Box<Span>>,
    ) -> Self {
        Self::with(State::calling(future, after), shared, span)
    }

    /// The future for a refused request: the limiter's answer is built on
    /// the first poll.
    pub(crate) fn refused(
        verdict: Verdict,
        grpc: bool,
        shared: Arc<Shared<M>>,
        span: Option<Box<Span>>,
    ) -> Self {
        let state = State::Refused {
            verdict: Box::new(verdict),
            grpc,
        };
        Self::with(state, shared, span)
    }

    /// A future that answers without asking the limiter (no client address:
    /// 500; a URI or header too long: 414 / 431); as gRPC for a gRPC call.
    pub(crate) fn answered(
        own: Own,
        grpc: bool,
        shared: Arc<Shared<M>>,
        span: Option<Box<Span>>,
    ) -> Self {
        Self::with(State::Answered { own, grpc }, shared, span)
    }

    #[inline(always)]
    fn with(state: State<S, ReqB>, shared: Arc<Shared<M>>, span: Option<Box<Span>>) -> Self {
        Self {
            state,
            shared,
            span: RequestSpan(span),
        }
    }
}

impl<S, ReqB, M, ResB> Future for ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>, Response = Response<ResB>>,
    M: MakeResponse,
{
    type Output = Result<Response<ResponseBody<ResB>>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.span.0.as_deref().map(Span::enter);
        loop {
            match this.state.as_mut().project() {
                StateProj::Checking { checking } => {
                    let mut verdict = ready!(Pin::new(&mut checking.check).poll(cx));
                    observe(&this.shared.counters, this.span.0.as_deref(), &verdict);
                    let taken = this.state.as_mut().project_replace(State::Done);
                    let StateTake::Checking { checking } = taken else {
                        return Poll::Pending;
                    };
                    if verdict.outcome != Outcome::Forward {
                        let grpc = is_grpc(checking.request.headers());
                        return Poll::Ready(Ok(refused(this.shared, &mut verdict, grpc)));
                    }
                    let Checking { request, inner, .. } = *checking;
                    this.state.set(call(inner, request, verdict));
                }
                StateProj::Calling {
                    future,
                    after,
                    done,
                } => {
                    if *done {
                        return Poll::Pending;
                    }
                    if after.is_nothing() {
                        // The usual request: the response passes through,
                        // mapped as it is polled (one copy of it less).
                        return future.poll(cx).map(|res| {
                            *done = true;
                            res.map(|res| passed(this.shared, res))
                        });
                    }
                    let res = ready!(future.poll(cx));
                    *done = true;
                    // Matched rather than mapped: each move of the
                    // response copies it.
                    return Poll::Ready(match res {
                        Ok(res) => Ok(forwarded(this.shared, after, res)),
                        Err(e) => Err(e),
                    });
                }
                StateProj::Refused { .. } => {
                    let StateTake::Refused { mut verdict, grpc } =
                        this.state.as_mut().project_replace(State::Done)
                    else {
                        return Poll::Pending;
                    };
                    return Poll::Ready(Ok(refused(this.shared, &mut verdict, grpc)));
                }
                StateProj::Answered { own, grpc } => {
                    let (own, grpc) = (*own, *grpc);
                    this.state.set(State::Done);
                    return Poll::Ready(Ok(answered(this.shared, own, grpc)));
                }
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

/// The request's span, if kept: its drop checks for `None` in line and
/// drops a span out of line (the drop glue of `Option<Box<Span>>` saves
/// and restores six registers before it finds the usual `None`).
struct RequestSpan(Option<Box<Span>>);

impl Drop for RequestSpan {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(span) = self.0.take() {
            drop_span(span);
        }
    }
}

/// Drops a request's span (see [`RequestSpan`]).
#[inline(never)]
fn drop_span(span: Box<Span>) {
    drop(span);
}

/// Calls the inner service with a forwarded request (after a backend that
/// waited on I/O).
fn call<S, ReqB>(mut inner: S, mut request: Request<ReqB>, verdict: Verdict) -> State<S, ReqB>
where
    S: Service<Request<ReqB>>,
{
    let charge = charge_for(&verdict, &mut request);
    let future = inner.call(request);
    State::calling(future, After::new(verdict, charge))
}

impl<S, ReqB> State<S, ReqB>
where
    S: Service<Request<ReqB>>,
{
    /// Waiting on the inner service's answer to a forwarded request.
    #[inline(always)]
    fn calling(future: S::Future, after: After) -> Self {
        State::Calling {
            future,
            after,
            done: false,
        }
    }
}

impl<S, ReqB, M> fmt::Debug for ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
