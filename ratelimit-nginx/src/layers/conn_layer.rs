//! [`LimitConnLayer`] and its service [`LimitConn`]: `limit_conn` for a route.
//!
//! A request is counted when its head is read, until its response body is
//! done or dropped (the client went away); if the inner service fails, or
//! its future is dropped before a response, the count is given back then.
//! A refused request is not counted and never reaches the inner service.
//!
//! # Examples
//!
//! ```
//! use http::{Request, Response, StatusCode};
//! use ratelimit_nginx::{Level, NginxConfig, ZoneRegistry};
//! use ratelimit_core::ClientIp;
//! use ratelimit_nginx::LimitConnLayer;
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = NginxConfig::parse("limit_conn_zone $client_ip zone=conns:1m;")?;
//! let zones = ZoneRegistry::new().load(&config)?;
//! let policy = zones.limit_conn(&Level::parse("limit_conn conns 1;")?)?;
//! let downloads = LimitConnLayer::new(policy).layer(service_fn(|_req: Request<()>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(String::from("big file")))
//! }));
//! let request = || {
//!     let mut req = Request::new(());
//!     req.extensions_mut().insert(ClientIp("203.0.113.7".parse().unwrap()));
//!     req
//! };
//! let first = downloads.clone().oneshot(request()).await?;
//! // The first body is not done: a second download is refused.
//! assert_eq!(downloads.clone().oneshot(request()).await?.status(), StatusCode::SERVICE_UNAVAILABLE);
//! drop(first);
//! assert_eq!(downloads.clone().oneshot(request()).await?.status(), StatusCode::OK);
//! # Ok(())
//! # }
//! ```

use std::task::{Context, Poll};

use crate::LimitConnPolicy;
use http::{Request, Response};
use tower_service::Service;

use super::body::ConnBody;
use super::conn_future::ConnFuture;
use super::reject::{record_conn_status, rejection};
use super::scaffold::layer_scaffold;
use super::settings::Settings;

/// Applies a level's `limit_conn` list to every request of the wrapped service.
#[derive(Clone, Debug)]
pub struct LimitConnLayer {
    policy: LimitConnPolicy,
    settings: Settings,
}

impl LimitConnLayer {
    /// A layer applying `policy`.
    pub fn new(policy: LimitConnPolicy) -> Self {
        Self {
            settings: Settings::new(policy.zones().map(|z| z.key())),
            policy,
        }
    }

    /// The policy applied.
    pub fn policy(&self) -> &LimitConnPolicy {
        &self.policy
    }
}

layer_scaffold!(LimitConnLayer, LimitConn, "limit_conn");

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for LimitConn<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Default + From<&'static str>,
{
    type Response = Response<ConnBody<ResBody>>;
    type Error = S::Error;
    type Future = ConnFuture<S::Future, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let decision = match self.layer.settings.source(&req) {
            Ok(source) => self.layer.policy.acquire(&source),
            Err(response) => {
                return ConnFuture::rejected(response.map(ConnBody::without_permit));
            }
        };
        let status = decision.status();
        record_conn_status(req.extensions_mut(), status);
        if let Some(rejected) = decision.rejected() {
            let mut response = rejection::<ResBody>(rejected).map(ConnBody::without_permit);
            record_conn_status(response.extensions_mut(), status);
            return ConnFuture::rejected(response);
        }
        ConnFuture::called(self.inner.call(req), decision.into_permit(), status)
    }
}
