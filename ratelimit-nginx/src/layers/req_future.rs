//! The response future of [`LimitReq`](super::LimitReq): wait, then call.
//!
//! The wait is part of this future: dropping it (a client that goes away, a
//! timeout around the service) abandons the request before the inner
//! service sees it.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::ReqFuture;
//! use std::convert::Infallible;
//! use tower::util::BoxCloneService;
//!
//! // Over a `Send` service the future is `Send`: a server can spawn it.
//! type Inner = BoxCloneService<http::Request<()>, http::Response<()>, Infallible>;
//! fn spawnable<T: Send + 'static>() {}
//! spawnable::<ReqFuture<Inner, ()>>();
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use crate::LimitReqStatus;
use http::{Request, Response};
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tower_service::Service;

use super::reject::record_req_status;

pin_project! {
    /// Waits for the request's turn (when delayed), then runs the inner
    /// service; or answers a refused request.
    pub struct ReqFuture<S, ReqBody>
    where
        S: Service<Request<ReqBody>>,
    {
        #[pin]
        state: State<S::Future, S::Response>,
        pending: Option<(S, Request<ReqBody>)>,
        status: Option<LimitReqStatus>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, R> {
        Waiting { #[pin] sleep: Sleep },
        Calling { #[pin] future: F },
        Refused { response: Option<R> },
    }
}

impl<S, ReqBody> ReqFuture<S, ReqBody>
where
    S: Service<Request<ReqBody>>,
{
    pub(crate) fn rejected(response: S::Response) -> Self {
        Self {
            state: State::Refused {
                response: Some(response),
            },
            pending: None,
            status: None,
        }
    }

    pub(crate) fn delayed(
        delay: Duration,
        service: S,
        req: Request<ReqBody>,
        status: Option<LimitReqStatus>,
    ) -> Self {
        Self {
            state: State::Waiting {
                sleep: tokio::time::sleep(delay),
            },
            pending: Some((service, req)),
            status,
        }
    }

    pub(crate) fn called(future: S::Future, status: Option<LimitReqStatus>) -> Self {
        Self {
            state: State::Calling { future },
            pending: None,
            status,
        }
    }
}

impl<S, ReqBody, ResBody> Future for ReqFuture<S, ReqBody>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    type Output = Result<Response<ResBody>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Waiting { sleep } => {
                    ready!(sleep.poll(cx));
                    // Taken once; a future polled after completion stays pending.
                    let Some((mut service, req)) = this.pending.take() else {
                        return Poll::Pending;
                    };
                    this.state.set(State::Calling {
                        future: service.call(req),
                    });
                }
                StateProj::Calling { future } => {
                    let mut response = ready!(future.poll(cx))?;
                    record_req_status(response.extensions_mut(), *this.status);
                    return Poll::Ready(Ok(response));
                }
                StateProj::Refused { response } => {
                    return match response.take() {
                        Some(response) => Poll::Ready(Ok(response)),
                        None => Poll::Pending,
                    };
                }
            }
        }
    }
}

impl<S, ReqBody> fmt::Debug for ReqFuture<S, ReqBody>
where
    S: Service<Request<ReqBody>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReqFuture")
            .field("waiting", &self.pending.is_some())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
