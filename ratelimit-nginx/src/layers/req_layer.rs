//! [`LimitReqLayer`] and its service [`LimitReq`]: `limit_req` for a route.
//!
//! The decision is made when the request arrives (its head is read). A
//! refused request gets the configured status and never reaches the inner
//! service. A delayed request waits inside the response future, without
//! blocking other requests, so the wait counts against the client's
//! timeouts, then goes on to the inner service. `$limit_req_status` is put
//! on the request (for the inner service) and on the response.
//!
//! The wait uses `tokio::time::sleep`, so it needs a Tokio runtime with its
//! timer, as axum and hyper servers have; called outside a runtime, a
//! delayed request goes on at once (and a warning is logged).
//!
//! # Examples
//!
//! ```
//! use http::{Request, Response, StatusCode};
//! use ratelimit_nginx::{Level, NginxConfig, ZoneRegistry};
//! use ratelimit_core::ClientIp;
//! use ratelimit_nginx::LimitReqLayer;
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = NginxConfig::parse("limit_req_zone $client_ip zone=perip:1m rate=10r/s;")?;
//! let zones = ZoneRegistry::new().load(&config)?;
//! let policy = zones.limit_req(&Level::parse("limit_req zone=perip burst=2 nodelay; limit_req_status 429;")?)?;
//! let login = LimitReqLayer::new(policy).layer(service_fn(|_req: Request<String>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(String::from("welcome")))
//! }));
//!
//! let mut statuses = Vec::new();
//! for _ in 0..4 {
//!     let mut req = Request::new(String::new());
//!     req.extensions_mut().insert(ClientIp("203.0.113.7".parse()?));
//!     let res = login.clone().oneshot(req).await?;
//!     statuses.push(res.status());
//! }
//! assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS]);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::task::{Context, Poll};

use crate::LimitReqPolicy;
use http::{Request, Response};
use ratelimit_core::{Clock, SystemClock};
use tower_service::Service;

use super::reject::{record_req_status, rejection};
use super::req_future::ReqFuture;
use super::scaffold::layer_scaffold;
use super::settings::Settings;

/// Applies a level's `limit_req` list to every request of the wrapped service.
#[derive(Clone, Debug)]
pub struct LimitReqLayer {
    policy: LimitReqPolicy,
    clock: Arc<dyn Clock>,
    settings: Settings,
}

impl LimitReqLayer {
    /// A layer reading the wall clock.
    pub fn new(policy: LimitReqPolicy) -> Self {
        Self::new_with_clock(policy, SystemClock)
    }

    /// A layer reading `clock` (such as a `ManualClock` or a [`TokioClock`](ratelimit_core::TokioClock)).
    pub fn new_with_clock(policy: LimitReqPolicy, clock: impl Clock) -> Self {
        Self {
            settings: Settings::new(policy.zones().map(|z| z.key())),
            policy,
            clock: Arc::new(clock),
        }
    }

    /// The policy applied.
    pub fn policy(&self) -> &LimitReqPolicy {
        &self.policy
    }
}

layer_scaffold!(LimitReqLayer, LimitReq, "limit_req");

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for LimitReq<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: Default + From<&'static str>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ReqFuture<S, ReqBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let now = self.layer.clock.now_ms();
        let decision = match self.layer.settings.source(&req) {
            Ok(source) => self.layer.policy.check(&source, now),
            Err(response) => return ReqFuture::rejected(response),
        };
        let status = decision.status();
        record_req_status(req.extensions_mut(), status);
        if let Some(rejected) = decision.rejected() {
            let mut response = rejection(rejected);
            record_req_status(response.extensions_mut(), status);
            return ReqFuture::rejected(response);
        }
        let delay = decision.delay();
        if !delay.is_zero() && tokio::runtime::Handle::try_current().is_ok() {
            // The ready service goes into the future; a clone stays here.
            let clone = self.inner.clone();
            let ready = std::mem::replace(&mut self.inner, clone);
            return ReqFuture::delayed(delay, ready, req, status);
        }
        if !delay.is_zero() {
            tracing::warn!(target: crate::log::LOG_TARGET, "no Tokio runtime: the request is not delayed");
        }
        ReqFuture::called(self.inner.call(req), status)
    }
}
