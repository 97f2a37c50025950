//! The response future of [`LimitConn`](super::LimitConn): hands the counts
//! over to the response body.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{ConnBody, ConnFuture};
//! use std::convert::Infallible;
//! use std::future::Ready;
//!
//! // Over a `Send` service the future and the body are `Send`.
//! fn spawnable<T: Send + 'static>() {}
//! spawnable::<ConnFuture<Ready<Result<http::Response<String>, Infallible>>, String>>();
//! spawnable::<ConnBody<String>>();
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::{ConnPermit, LimitConnStatus};
use http::Response;
use pin_project_lite::pin_project;

use super::body::ConnBody;
use super::reject::record_conn_status;

pin_project! {
    /// Runs the inner service holding the request's counts; they move into
    /// the [`ConnBody`], or are given back if this future fails or is dropped.
    pub struct ConnFuture<F, B> {
        #[pin]
        state: State<F, B>,
        permit: Option<ConnPermit>,
        status: Option<LimitConnStatus>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, B> {
        Calling { #[pin] future: F },
        Refused { response: Option<Response<ConnBody<B>>> },
    }
}

impl<F, B> ConnFuture<F, B> {
    pub(crate) fn called(future: F, permit: ConnPermit, status: Option<LimitConnStatus>) -> Self {
        Self {
            state: State::Calling { future },
            permit: Some(permit),
            status,
        }
    }

    pub(crate) fn rejected(response: Response<ConnBody<B>>) -> Self {
        Self {
            state: State::Refused {
                response: Some(response),
            },
            permit: None,
            status: None,
        }
    }
}

impl<F, B, E> Future for ConnFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<ConnBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.state.project() {
            StateProj::Calling { future } => {
                let result = ready!(future.poll(cx));
                let permit = this.permit.take().unwrap_or_default();
                // On an error the permit is dropped here: the count is given back.
                let response = result?;
                let mut response = response.map(|body| ConnBody::new(body, permit));
                record_conn_status(response.extensions_mut(), *this.status);
                Poll::Ready(Ok(response))
            }
            StateProj::Refused { response } => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                // Polled after completion.
                None => Poll::Pending,
            },
        }
    }
}

impl<F, B> fmt::Debug for ConnFuture<F, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnFuture")
            .field("permit", &self.permit)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
