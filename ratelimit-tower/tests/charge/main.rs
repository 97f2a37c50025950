//! Charges after the response through the layer (`charge: response`), on the
//! in-memory backend and on Valkey: a `ResponseCost` on the response head,
//! a `Charge` a streamed body adds to as it goes, a body dropped mid-stream,
//! the limiter's own answers never charged, and the next request refused
//! with the right Retry-After once the charged total passes the limit
//! ([`scenarios`]); and, on a backend that holds charges at a gate, that
//! `charge_before_end` holds the body until its charge is answered while
//! the default does not ([`gate`]).

#[path = "../support/mod.rs"]
mod support;

mod cancel;
mod gate;
mod headers;
mod scenarios;

use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use ratelimit_core::backend::Backend;
use ratelimit_core::{ClientIp, Limiter, ManualClock, RequestAttrs};
use ratelimit_tower::{Charge, MakeResponse, RateLimitLayer, ResponseBody, ResponseCost};
use support::*;
use tower::util::BoxCloneService;
use tower::{Layer, ServiceExt};

/// 100 tokens a minute per API key, charged after the response; a tight
/// per-IP backstop (which the rule set requires beside a header key).
pub(crate) const RULES: &str = r#"[
  {"id": "tokens", "expression": "starts_with(http.request.uri.path, \"/v1/\")",
   "algorithm": "fixed_window", "limit": 100, "period": "1m",
   "key": ["header:x-api-key"], "charge": "response", "ratelimit_headers": true},
  {"id": "per-ip", "expression": "true", "algorithm": "fixed_window",
   "limit": 50, "period": "1m", "key": ["ip"]}
]"#;

/// The upstream's body: `left` data frames, each adding `each` to the
/// request's [`Charge`] as it is produced, then trailers when asked.
pub(crate) struct Completion {
    left: u32,
    each: u64,
    charge: Option<Charge>,
    trailers: bool,
}

impl Body for Completion {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left > 0 {
            self.left -= 1;
            if let Some(c) = &self.charge {
                c.add(self.each);
            }
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"token ")))));
        }
        if std::mem::take(&mut self.trailers) {
            let mut t = HeaderMap::new();
            t.insert("x-tokens", http::HeaderValue::from_static("done"));
            return Poll::Ready(Some(Ok(Frame::trailers(t))));
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0 && !self.trailers
    }
}

pub(crate) type Svc =
    BoxCloneService<Request<String>, Response<ResponseBody<Completion>>, Infallible>;

/// The upstream: `?head=N` sets `ResponseCost(N)`, `?chunks=K&each=N`
/// streams K frames adding N each, `&trailers` ends with trailers. It says
/// in `x-had-charge` whether the request carried a [`Charge`].
pub(crate) async fn upstream(req: Request<String>) -> Result<Response<Completion>, Infallible> {
    let arg = |name: &str| -> u64 {
        let query = req.uri().query().unwrap_or("");
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or(0)
    };
    let charge = req.extensions().get::<Charge>().cloned();
    let body = Completion {
        left: u32::try_from(arg("chunks")).unwrap_or(0).max(1),
        each: arg("each"),
        charge: charge.clone(),
        trailers: req.uri().query().is_some_and(|q| q.contains("trailers")),
    };
    let mut res = Response::new(body);
    let had = if charge.is_some() { "yes" } else { "no" };
    res.headers_mut()
        .insert("x-had-charge", had.parse().unwrap());
    res.extensions_mut().insert(ResponseCost(arg("head")));
    Ok(res)
}

pub(crate) struct Setup {
    pub(crate) svc: Svc,
    pub(crate) limiter: Limiter,
    pub(crate) clock: ManualClock,
    /// Charges wait on the network (Valkey).
    remote: bool,
    before_end: bool,
}

impl Setup {
    pub(crate) fn new(backend: Arc<dyn Backend>, remote: bool, before_end: bool) -> Self {
        Self::with_layer(backend, remote, before_end, |l| l)
    }

    pub(crate) fn with_layer<M>(
        backend: Arc<dyn Backend>,
        remote: bool,
        before_end: bool,
        f: impl FnOnce(RateLimitLayer) -> RateLimitLayer<M>,
    ) -> Self
    where
        M: MakeResponse + Clone + Send + Sync + 'static,
    {
        let clock = clock();
        let limiter = Limiter::builder(rules(RULES))
            .clock(clock.clone())
            .backend_arc(backend)
            .build();
        let layer = f(RateLimitLayer::new(limiter.clone()).charge_before_end(before_end));
        let svc = BoxCloneService::new(layer.layer(tower::service_fn(upstream)));
        Self {
            svc,
            limiter,
            clock,
            remote,
            before_end,
        }
    }

    pub(crate) async fn send(
        &self,
        ip: &str,
        key: &str,
        uri: &str,
    ) -> Response<ResponseBody<Completion>> {
        let mut req = Request::builder()
            .uri(uri)
            .header("x-api-key", key)
            .body(String::new())
            .unwrap();
        let ip: IpAddr = ip.parse().unwrap();
        req.extensions_mut().insert(ClientIp(ip));
        self.svc.clone().oneshot(req).await.unwrap()
    }

    /// Sends a request and reads its body to the end.
    pub(crate) async fn read(&self, key: &str, uri: &str) -> (u16, Option<String>) {
        let res = self.send("192.0.2.1", key, uri).await;
        let status = res.status().as_u16();
        let retry = res
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        res.into_body().collect().await.unwrap();
        (status, retry)
    }

    /// Whether the charge of a body that ended runs in a spawned task: on
    /// Valkey, unless the layer awaits it (a dropped body always spawns).
    fn spawned(&self, dropped: bool) -> bool {
        self.remote && (dropped || !self.before_end)
    }

    /// Asserts what is left of `key`'s tokens: at once when the charge was
    /// made before the body ended, else polling until the spawned charge
    /// landed (bounded).
    pub(crate) async fn left(&self, key: &str, want: u64, dropped: bool) {
        let attrs = RequestAttrs::new("192.0.2.1".parse().unwrap())
            .with_header("x-api-key", key)
            .with_path("/v1/complete");
        let peek = || async { self.limiter.peek("tokens", &attrs).await.unwrap().remaining };
        let mut got = peek().await;
        // A spawned charge: up to 2 s for it to land.
        for _ in 0..400 {
            if got == want || !self.spawned(dropped) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            got = peek().await;
        }
        assert_eq!(got, want, "tokens left for {key}");
    }
}
