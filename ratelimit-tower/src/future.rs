//! [`ResponseFuture`]: check, then call the inner service or answer.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use pin_project_lite::pin_project;
use ratelimit_core::limiter::VerdictFuture;
use ratelimit_core::{Outcome, Verdict};
use tower_service::Service;
use tracing::Span;

use crate::layer::Shared;
use crate::meter::Meter;
use crate::response::outcome_label;
use crate::service::own_answer;
use crate::{headers, Charge, MakeResponse, ResponseBody, ResponseCost, WouldLimit};

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
        // `None` while nobody listens (see `service::span_listened`).
        span: Option<Span>,
    }
}

pin_project! {
    #[project = StateProj]
    pub(crate) enum State<S, ReqB>
    where
        S: Service<Request<ReqB>>,
    {
        // The backend has not answered yet (a backend with I/O).
        Checking {
            check: VerdictFuture,
            request: Option<Request<ReqB>>,
            inner: Option<S>,
        },
        Calling {
            #[pin]
            future: S::Future,
            verdict: Verdict,
            // Shared with the request's extensions when `charge: response`
            // rules matched.
            charge: Option<Charge>,
        },
        // Refused at once: the limiter's answer is built on the first poll.
        Refused {
            verdict: Option<Verdict>,
        },
        // The layer's own answer, without asking the limiter.
        Answered {
            response: Option<Response<Bytes>>,
        },
        Done,
    }
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
        span: Option<Span>,
    ) -> Self
    where
        S: Clone,
    {
        let clone = inner.clone();
        let state = State::Checking {
            check,
            request: Some(request),
            inner: Some(std::mem::replace(inner, clone)),
        };
        Self {
            state,
            shared,
            span,
        }
    }

    /// The future for a forwarded request: `future` is the inner service's
    /// answer, `charge` what [`charge_for`] gave the request.
    #[inline(always)]
    pub(crate) fn calling(
        future: S::Future,
        verdict: Verdict,
        charge: Option<Charge>,
        shared: Arc<Shared<M>>,
        span: Option<Span>,
    ) -> Self {
        Self {
            state: State::Calling {
                future,
                verdict,
                charge,
            },
            shared,
            span,
        }
    }

    /// The future for a refused request: the limiter's answer is built on
    /// the first poll.
    pub(crate) fn refused(verdict: Verdict, shared: Arc<Shared<M>>, span: Option<Span>) -> Self {
        Self {
            state: State::Refused {
                verdict: Some(verdict),
            },
            shared,
            span,
        }
    }

    /// A future that answers `response` without asking the limiter (no
    /// client address: 500; a URI or header too long: 414 / 431).
    pub(crate) fn answered(
        response: Response<Bytes>,
        shared: Arc<Shared<M>>,
        span: Option<Span>,
    ) -> Self {
        Self {
            state: State::Answered {
                response: Some(response),
            },
            shared,
            span,
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
        let _entered = this.span.as_ref().map(Span::enter);
        loop {
            match this.state.as_mut().project() {
                StateProj::Checking {
                    check,
                    request,
                    inner,
                } => {
                    let verdict = ready!(Pin::new(check).poll(cx));
                    observe(this.shared, this.span.as_ref(), &verdict);
                    if verdict.outcome != Outcome::Forward {
                        this.state.set(State::Done);
                        return Poll::Ready(Ok(answer(this.shared, &verdict)));
                    }
                    let (Some(request), Some(mut inner)) = (request.take(), inner.take()) else {
                        this.state.set(State::Done);
                        return Poll::Pending;
                    };
                    this.state.set(call(&mut inner, request, verdict));
                }
                StateProj::Calling {
                    future,
                    verdict,
                    charge,
                } => {
                    // Matched rather than mapped: each move of the
                    // response copies it.
                    let res = match ready!(future.poll(cx)) {
                        Ok(res) => forwarded(this.shared, verdict, charge.take(), res),
                        Err(e) => {
                            this.state.set(State::Done);
                            return Poll::Ready(Err(e));
                        }
                    };
                    this.state.set(State::Done);
                    return Poll::Ready(Ok(res));
                }
                StateProj::Refused { verdict } => {
                    let verdict = verdict.take();
                    this.state.set(State::Done);
                    return match verdict {
                        Some(v) => Poll::Ready(Ok(answer(this.shared, &v))),
                        None => Poll::Pending,
                    };
                }
                StateProj::Answered { response } => {
                    let response = response.take();
                    this.state.set(State::Done);
                    return match response {
                        Some(res) => {
                            this.shared.counters.response(res.status());
                            Poll::Ready(Ok(own_answer(res)))
                        }
                        None => Poll::Pending,
                    };
                }
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

/// Calls the inner service with a forwarded request (after a backend that
/// waited on I/O).
fn call<S, ReqB>(inner: &mut S, mut request: Request<ReqB>, verdict: Verdict) -> State<S, ReqB>
where
    S: Service<Request<ReqB>>,
{
    let charge = charge_for(&verdict, &mut request);
    let future = inner.call(request);
    State::Calling {
        future,
        verdict,
        charge,
    }
}

/// The [`Charge`] a forwarded request gives the inner service when
/// `charge: response` rules matched (and only then: no allocation on the
/// common path). A request that already carries one (from a rate limit
/// layer further out) keeps it: both layers charge the one total.
pub(crate) fn charge_for<ReqB>(verdict: &Verdict, request: &mut Request<ReqB>) -> Option<Charge> {
    verdict.ticket.charges().then(|| {
        let outer = request.extensions().get::<Charge>().cloned();
        outer.unwrap_or_else(|| {
            let c = Charge::default();
            request.extensions_mut().insert(c.clone());
            c
        })
    })
}

/// The body of a 414 or 431: small JSON, like the limiter's own answers.
pub(crate) fn too_large_answer(status: StatusCode) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(br#"{"error":"too_large"}"#));
    *res.status_mut() = status;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    res
}

/// Records the verdict on the span, the metrics and one event per rule
/// (the limiter fills the reports only while debug events are enabled).
pub(crate) fn observe<M>(shared: &Shared<M>, span: Option<&Span>, verdict: &Verdict) {
    if let Some(span) = span {
        span.record("outcome", outcome_label(verdict.outcome));
    }
    shared.counters.decision(verdict.outcome);
    for r in &verdict.reports {
        let decision = match (r.allowed, r.would_limit) {
            (true, _) => "allowed",
            (false, true) => "would_limit",
            (false, false) => "limited",
        };
        tracing::debug!(
            rule = %r.rule,
            subject = %r.subject.to_hex(),
            decision,
            remaining = r.remaining,
            failed = r.failed,
            from_penalty_cache = r.from_penalty_cache,
            "rate limit rule",
        );
    }
}

/// The limiter's own answer (never counted by count rules).
fn answer<B, M: MakeResponse>(shared: &Shared<M>, verdict: &Verdict) -> Response<ResponseBody<B>> {
    let mut res = own_answer(shared.make_response.make_response(verdict));
    finish(shared, verdict, &mut res);
    res
}

/// The inner service's answer: counted, given the headers, and metered
/// when `charge: response` rules matched.
#[inline(always)]
fn forwarded<B, M>(
    shared: &Shared<M>,
    verdict: &mut Verdict,
    charge: Option<Charge>,
    res: Response<B>,
) -> Response<ResponseBody<B>> {
    shared
        .limiter
        .record_response(&verdict.ticket, res.status().as_u16());
    let mut res = if verdict.ticket.charges() {
        let head_cost = res.extensions().get::<ResponseCost>().map_or(0, |c| c.0);
        let ticket = std::mem::take(&mut verdict.ticket);
        let before_end = shared.charge_before_end;
        let meter = Meter::new(
            shared.limiter.clone(),
            ticket,
            head_cost,
            charge,
            before_end,
        );
        res.map(|body| ResponseBody::charged(body, meter))
    } else {
        res.map(ResponseBody::inner)
    };
    finish(shared, verdict, &mut res);
    res
}

fn finish<B, M>(shared: &Shared<M>, verdict: &Verdict, res: &mut Response<B>) {
    let now = if shared.legacy_headers {
        shared.limiter.now_ms()
    } else {
        0
    };
    headers::apply(verdict, res.headers_mut(), shared.legacy_headers, now);
    if !verdict.would_limit.is_empty() {
        res.extensions_mut()
            .insert(WouldLimit(verdict.would_limit.clone()));
    }
    shared.counters.response(res.status());
}

impl<S, ReqB, M> fmt::Debug for ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
