//! The response body: the inner service's, or the limiter's own answer.
//!
//! The inner service's body is wrapped with a [`Meter`] only when its
//! request matched `charge: response` rules; otherwise it passes through
//! untouched, with no allocation.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::meter::Meter;

pin_project! {
    /// The body of a response that went through the layer: the inner
    /// service's body untouched, or the bytes of the limiter's own answer.
    /// When the request matched `charge: response` rules, the inner body
    /// charges what the response cost as it ends (see [`Charge`](crate::Charge)).
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
        // The inner body of a request that matched `charge: response`
        // rules: charges its cost once, when it ends or is dropped.
        Charged {
            #[pin]
            body: B,
            meter: Box<Meter>,
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

    /// Wraps the inner service's body, charging `meter` when it ends.
    pub(crate) fn charged(body: B, meter: Meter) -> Self {
        Self {
            kind: Kind::Charged {
                body,
                meter: Box::new(meter),
            },
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

#[cfg(feature = "axum")]
impl<B> ResponseBody<B>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    /// As axum's body: the inner service's body itself when it passes
    /// through (no box when it is axum's body already, as an axum handler's
    /// is), the limiter's own bytes, or this body boxed when it charges.
    pub(crate) fn into_axum(self) -> axum::body::Body {
        match self.kind {
            Kind::Inner { body } => axum::body::Body::new(body),
            Kind::Full { bytes: None } => axum::body::Body::empty(),
            Kind::Full { bytes: Some(bytes) } => axum::body::Body::from(bytes),
            kind @ Kind::Charged { .. } => axum::body::Body::new(Self { kind }),
        }
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
            KindProj::Charged { body, meter } => poll_charged(body, meter, cx),
            KindProj::Full { bytes } => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            // Awaiting the charge: the end is reported once it is done.
            Kind::Charged { body, meter } if meter.is_armed() && !meter.before_end() => {
                body.is_end_stream()
            }
            Kind::Charged { meter, .. } => meter.is_done(),
            Kind::Full { bytes } => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Charged { body, meter } if meter.is_armed() => body.size_hint(),
            // Charging or charged: no more data (trailers at most).
            Kind::Charged { .. } => SizeHint::with_exact(0),
            Kind::Full { bytes } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}

/// Polls the inner body of a charged response: the charge starts at the
/// end of stream, at the trailers (held back while an awaited charge runs),
/// or at an error; after it, the inner body is not polled again.
fn poll_charged<B>(
    mut body: Pin<&mut B>,
    meter: &mut Meter,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, B::Error>>>
where
    B: Body<Data = Bytes>,
{
    if meter.is_armed() && !body.is_end_stream() {
        match std::task::ready!(body.as_mut().poll_frame(cx)) {
            Some(Ok(frame)) => match frame.into_trailers() {
                Ok(trailers) => meter.trailers = Some(trailers),
                Err(frame) => {
                    if body.is_end_stream() && !meter.before_end() {
                        meter.start(false);
                    }
                    return Poll::Ready(Some(Ok(frame)));
                }
            },
            Some(Err(e)) => {
                meter.start(false);
                return Poll::Ready(Some(Err(e)));
            }
            None => {}
        }
    }
    meter.start(true);
    std::task::ready!(meter.poll_charged(cx));
    Poll::Ready(meter.trailers.take().map(|t| Ok(Frame::trailers(t))))
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

    #[test]
    fn bodies_stay_send_and_sync() {
        // A charge being awaited sits in the body: it must not take
        // `Sync` away from bodies that had it.
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ResponseBody<http_body_util::Full<Bytes>>>();
    }

    #[tokio::test]
    async fn inner_bodies_pass_through() {
        let body = ResponseBody::inner(http_body_util::Full::new(Bytes::from_static(b"hi")));
        assert!(!body.is_full());
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"hi");
    }
}
