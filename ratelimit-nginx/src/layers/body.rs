//! [`ConnBody`]: a response body that holds the request's limit_conn counts
//! until it is done, or dropped when the client goes away.
//!
//! # Examples
//!
//! ```
//! use http_body::Body;
//! use ratelimit_nginx::ConnBody;
//!
//! let body = ConnBody::without_permit(String::from("done"));
//! assert!(!body.is_end_stream());
//! assert!(!body.holds_permit());
//! ```

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::ConnPermit;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// The inner body, plus the counts it gives back exactly once: at its
    /// end, on its first error, or when it is dropped.
    #[derive(Debug)]
    pub struct ConnBody<B> {
        #[pin]
        inner: B,
        permit: Option<ConnPermit>,
    }
}

impl<B> ConnBody<B> {
    pub(crate) fn new(inner: B, permit: ConnPermit) -> Self {
        Self {
            inner,
            permit: (!permit.is_empty()).then_some(permit),
        }
    }

    /// A body that holds no count (as for a refused request).
    pub fn without_permit(inner: B) -> Self {
        Self {
            inner,
            permit: None,
        }
    }

    /// True until the counts are given back.
    pub fn holds_permit(&self) -> bool {
        self.permit.is_some()
    }

    /// The inner body; the counts are given back.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Body> Body for ConnBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let frame = ready!(this.inner.as_mut().poll_frame(cx));
        let done = match &frame {
            None | Some(Err(_)) => true,
            Some(Ok(_)) => this.inner.is_end_stream(),
        };
        if done {
            this.permit.take();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
