//! The response body: the inner service's, or the limiter's own answer.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// The body of a response that went through the layer: the inner
    /// service's body untouched, or the bytes of the limiter's own answer.
    ///
    /// With axum it converts into a response like any body with `Bytes`
    /// data; with hyper it is sent as is.
    #[derive(Debug)]
    pub struct ResponseBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind<B> {
        Inner {
            #[pin]
            body: B,
        },
        Full {
            bytes: Option<Bytes>,
        },
    }
}

impl<B> ResponseBody<B> {
    /// Wraps the inner service's body.
    pub fn inner(body: B) -> Self {
        Self {
            kind: Kind::Inner { body },
        }
    }

    /// A body of `bytes`, sent in one frame.
    pub fn full(bytes: Bytes) -> Self {
        let bytes = (!bytes.is_empty()).then_some(bytes);
        Self {
            kind: Kind::Full { bytes },
        }
    }

    /// Whether this is the limiter's own answer.
    pub fn is_full(&self) -> bool {
        matches!(self.kind, Kind::Full { .. })
    }
}

impl<B> Body for ResponseBody<B>
where
    B: Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Inner { body } => body.poll_frame(cx),
            KindProj::Full { bytes } => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Full { bytes } => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Full { bytes } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn full_bodies_send_their_bytes_once() {
        let body: ResponseBody<http_body_util::Empty<Bytes>> =
            ResponseBody::full(Bytes::from_static(b"{}"));
        assert_eq!(body.size_hint().exact(), Some(2));
        assert!(!body.is_end_stream());
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"{}");
        let empty: ResponseBody<http_body_util::Empty<Bytes>> = ResponseBody::full(Bytes::new());
        assert!(empty.is_end_stream());
    }

    #[tokio::test]
    async fn inner_bodies_pass_through() {
        let body = ResponseBody::inner(http_body_util::Full::new(Bytes::from_static(b"hi")));
        assert!(!body.is_full());
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"hi");
    }
}
