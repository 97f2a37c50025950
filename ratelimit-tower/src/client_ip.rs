//! The connection's peer address, for servers without axum's `ConnectInfo`.
//!
//! [`ClientIp`] is `ratelimit_core::ClientIp`, the one client-address
//! extension that the nginx-compatible layers of `ratelimit-nginx` read too.
//!
//! The layer looks for the peer address in the request's extensions, in this
//! order: [`ClientIp`], axum's `ConnectInfo<SocketAddr>` (feature `axum`),
//! tonic's `TcpConnectInfo` (feature `tonic`), a plain `SocketAddr`. A bare
//! hyper server knows the address from `accept` and wraps its service in
//! [`SetClientIp`] to insert it. Trusted-proxy
//! selection ([`TrustedProxies`](crate::TrustedProxies)) applies on top.
//!
//! # Examples
//!
//! ```
//! use ratelimit_tower::{ClientIp, SetClientIp};
//! use std::convert::Infallible;
//! use tower_service::Service;
//!
//! # async fn demo() {
//! let handler = tower::service_fn(|req: http::Request<()>| async move {
//!     Ok::<_, Infallible>(req.extensions().get::<ClientIp>().copied())
//! });
//! let peer: std::net::SocketAddr = "192.0.2.1:50000".parse().unwrap();
//! let mut svc = SetClientIp::new(handler, peer.ip());
//! let seen = svc.call(http::Request::new(())).await.unwrap();
//! assert_eq!(seen, Some(ClientIp(peer.ip())));
//! # }
//! ```

use std::net::IpAddr;
use std::task::{Context, Poll};

use http::Request;
use tower_layer::Layer;
use tower_service::Service;

pub use ratelimit_core::ClientIp;

/// Inserts [`ClientIp`] into every request, then calls the inner service.
#[derive(Debug, Clone)]
pub struct SetClientIp<S> {
    inner: S,
    ip: IpAddr,
}

impl<S> SetClientIp<S> {
    /// Wraps `inner` for the connection from `ip`.
    pub fn new(inner: S, ip: IpAddr) -> Self {
        Self { inner, ip }
    }
}

ratelimit_core::inner_accessors!(impl<S> SetClientIp<S> { mut inner: S } "inner service");

impl<S, B> Service<Request<B>> for SetClientIp<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        req.extensions_mut().insert(ClientIp(self.ip));
        self.inner.call(req)
    }
}

/// A [`Layer`](https://docs.rs/tower-layer/0.3/tower_layer/trait.Layer.html)
/// applying [`SetClientIp`] for one connection.
#[derive(Debug, Clone, Copy)]
pub struct SetClientIpLayer {
    ip: IpAddr,
}

impl SetClientIpLayer {
    /// For the connection from `ip`.
    pub fn new(ip: IpAddr) -> Self {
        Self { ip }
    }
}

impl<S> Layer<S> for SetClientIpLayer {
    type Service = SetClientIp<S>;

    fn layer(&self, inner: S) -> Self::Service {
        SetClientIp::new(inner, self.ip)
    }
}
