//! The layer for axum: the same rate limiting, answering with axum's own
//! body type.
//!
//! axum turns whatever a layer on a `Router` answers into its
//! `Response<axum::body::Body>`, and a body of another type, such as
//! [`ResponseBody`], is boxed on the way: one allocation more per request,
//! and one more dynamic call per body frame. [`RateLimitLayer::for_axum`]
//! gives [`AxumLayer`], whose service answers axum's body directly: the
//! inner service's body passes through as it is (an axum handler's body is
//! axum's already), the limiter's own answers become axum bodies of their
//! bytes, and only a response that charges its cost (`charge: response`
//! rules) is boxed, with its meter. Everything else is [`RateLimit`]'s.
//!
//! # Examples
//!
//! ```
//! use axum::{routing::get, Router};
//! use ratelimit_tower::RateLimitLayer;
//!
//! let layer = RateLimitLayer::from_json_str(r#"[{"id": "all", "expression": "true",
//!     "algorithm": "token_bucket", "limit": 100, "burst": 100, "period": "1s",
//!     "key": ["ip"]}]"#)?;
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "hello" }))
//!     .layer(layer.for_axum());
//! # Ok::<(), ratelimit_core::rules::RuleError>(())
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::{JsonResponse, MakeResponse, RateLimit, RateLimitLayer, ResponseBody, ResponseFuture};

/// [`RateLimitLayer`] answering axum's body type: see
/// [`RateLimitLayer::for_axum`].
#[must_use]
pub struct AxumLayer<M = JsonResponse> {
    layer: RateLimitLayer<M>,
}

impl<M> RateLimitLayer<M> {
    /// This layer, answering `http::Response<axum::body::Body>`: put it on
    /// an axum `Router` to spare the box axum would put around
    /// [`ResponseBody`] on every request (see [`AxumLayer`]).
    pub fn for_axum(self) -> AxumLayer<M> {
        AxumLayer { layer: self }
    }
}

// The layer it wraps holds the limiter, for publishing rules and reading stats.
ratelimit_core::inner_accessors!(impl<M> AxumLayer<M> { layer: RateLimitLayer<M> } "layer");

impl<M: Clone> Clone for AxumLayer<M> {
    fn clone(&self) -> Self {
        Self {
            layer: self.layer.clone(),
        }
    }
}

impl<M> fmt::Debug for AxumLayer<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AxumLayer")
            .field("layer", &self.layer)
            .finish()
    }
}

impl<S, M: Clone> Layer<S> for AxumLayer<M> {
    type Service = AxumRateLimit<S, M>;

    fn layer(&self, inner: S) -> Self::Service {
        AxumRateLimit {
            inner: self.layer.layer(inner),
        }
    }
}

/// [`RateLimit`] answering axum's body type: see [`AxumLayer`].
pub struct AxumRateLimit<S, M = JsonResponse> {
    inner: RateLimit<S, M>,
}

ratelimit_core::inner_accessors!(impl<S, M> AxumRateLimit<S, M> { inner: RateLimit<S, M> } "rate-limiting service");

impl<S: Clone, M> Clone for AxumRateLimit<S, M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<S: fmt::Debug, M> fmt::Debug for AxumRateLimit<S, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AxumRateLimit")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<S, M, ReqB, ResB> Service<Request<ReqB>> for AxumRateLimit<S, M>
where
    S: Service<Request<ReqB>, Response = Response<ResB>> + Clone,
    M: MakeResponse,
    ResB: http_body::Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<axum::BoxError>,
{
    type Response = Response<axum::body::Body>;
    type Error = S::Error;
    type Future = AxumResponseFuture<S, ReqB, M>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        AxumResponseFuture {
            inner: self.inner.call(req),
        }
    }
}

pin_project! {
    /// The response future of [`AxumRateLimit`].
    pub struct AxumResponseFuture<S, ReqB, M>
    where
        S: Service<Request<ReqB>>,
    {
        #[pin]
        inner: ResponseFuture<S, ReqB, M>,
    }
}

impl<S, ReqB, M, ResB> Future for AxumResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>, Response = Response<ResB>>,
    M: MakeResponse,
    ResB: http_body::Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<axum::BoxError>,
{
    type Output = Result<Response<axum::body::Body>, S::Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let res = ready!(self.project().inner.poll(cx));
        Poll::Ready(res.map(|res| res.map(ResponseBody::into_axum)))
    }
}

impl<S, ReqB, M> fmt::Debug for AxumResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AxumResponseFuture").finish_non_exhaustive()
    }
}
