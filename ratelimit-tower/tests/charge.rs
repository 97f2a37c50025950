//! Charges after the response through the layer (`charge: response`), on the
//! in-memory backend and on Valkey: a `ResponseCost` on the response head,
//! a `Charge` a streamed body adds to as it goes, a body dropped mid-stream,
//! the limiter's own answers never charged, and the next request refused
//! with the right Retry-After once the charged total passes the limit.

mod support;

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
use ratelimit_core::store::MemoryBackend;
use ratelimit_core::{ClientIp, Limiter, ManualClock, RequestAttrs, Verdict};
use ratelimit_tower::{
    Charge, JsonResponse, MakeResponse, RateLimitLayer, ResponseBody, ResponseCost,
};
use support::*;
use tower::util::BoxCloneService;
use tower::{Layer, ServiceExt};

/// 100 tokens a minute per API key, charged after the response; a tight
/// per-IP backstop (which the rule set requires beside a header key).
const RULES: &str = r#"[
  {"id": "tokens", "expression": "starts_with(http.request.uri.path, \"/v1/\")",
   "algorithm": "fixed_window", "limit": 100, "period": "1m",
   "key": ["header:x-api-key"], "charge": "response", "ratelimit_headers": true},
  {"id": "per-ip", "expression": "true", "algorithm": "fixed_window",
   "limit": 50, "period": "1m", "key": ["ip"]}
]"#;

/// The upstream's body: `left` data frames, each adding `each` to the
/// request's [`Charge`] as it is produced, then trailers when asked.
struct Completion {
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

type Svc = BoxCloneService<Request<String>, Response<ResponseBody<Completion>>, Infallible>;

/// The upstream: `?head=N` sets `ResponseCost(N)`, `?chunks=K&each=N`
/// streams K frames adding N each, `&trailers` ends with trailers. It says
/// in `x-had-charge` whether the request carried a [`Charge`].
async fn upstream(req: Request<String>) -> Result<Response<Completion>, Infallible> {
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

struct Setup {
    svc: Svc,
    limiter: Limiter,
    clock: ManualClock,
    /// Charges wait on the network (Valkey).
    remote: bool,
    before_end: bool,
}

impl Setup {
    fn new(backend: Arc<dyn Backend>, remote: bool, before_end: bool) -> Self {
        Self::with_layer(backend, remote, before_end, |l| l)
    }

    fn with_layer<M>(
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

    async fn send(&self, ip: &str, key: &str, uri: &str) -> Response<ResponseBody<Completion>> {
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
    async fn read(&self, key: &str, uri: &str) -> (u16, Option<String>) {
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
    async fn left(&self, key: &str, want: u64, dropped: bool) {
        let attrs = RequestAttrs::new("192.0.2.1".parse().unwrap())
            .with_header("x-api-key", key)
            .with_path("/v1/complete");
        let mut got = None;
        for _ in 0..400 {
            let d = self.limiter.peek("tokens", &attrs).await.unwrap();
            if d.remaining == want || !self.spawned(dropped) {
                got = Some(d.remaining);
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(got, Some(want), "tokens left for {key}");
    }
}

/// A cost on the response head is charged when the body ends; once the
/// total passes the limit the next request is refused until the window
/// ends, without reaching the upstream.
async fn response_cost_scenario(s: &Setup) {
    s.left("k1", 100, false).await;
    assert_eq!(s.read("k1", "/v1/complete?head=0").await.0, 200);
    s.left("k1", 100, false).await;
    assert_eq!(s.read("k1", "/v1/complete?head=60").await.0, 200);
    s.left("k1", 40, false).await;
    // The budget is not spent yet: admitted, and the total passes 100.
    assert_eq!(s.read("k1", "/v1/complete?head=60").await.0, 200);
    s.left("k1", 0, false).await;
    advance(&s.clock, 15);
    let (status, retry) = s.read("k1", "/v1/complete?head=60").await;
    assert_eq!((status, retry.as_deref()), (429, Some("45")));
    // Another key has its own budget.
    assert_eq!(s.read("k2", "/v1/complete?head=1").await.0, 200);
    s.left("k2", 99, false).await;
    // The next window starts afresh.
    advance(&s.clock, 45);
    assert_eq!(s.read("k1", "/v1/complete?head=1").await.0, 200);
    s.left("k1", 99, false).await;
}

/// A streamed body adds as it goes; the head's cost adds to it; trailers
/// pass through (after the charge when it is awaited).
async fn streamed_scenario(s: &Setup) {
    assert_eq!(s.read("s1", "/v1/stream?chunks=5&each=10").await.0, 200);
    s.left("s1", 50, false).await;
    let res = s
        .send(
            "192.0.2.1",
            "s1",
            "/v1/stream?chunks=3&each=5&head=3&trailers",
        )
        .await;
    let collected = res.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap_or_default();
    assert_eq!(trailers.get("x-tokens").unwrap(), "done");
    s.left("s1", 32, false).await;
}

/// A client that hangs up mid-stream pays for what was produced.
async fn dropped_scenario(s: &Setup) {
    let res = s
        .send("192.0.2.1", "d1", "/v1/stream?chunks=10&each=7")
        .await;
    let mut body = res.into_body();
    for _ in 0..3 {
        body.frame().await.unwrap().unwrap();
    }
    drop(body);
    s.left("d1", 100 - 21, true).await;
}

/// Requests no `charge: response` rule matched get no [`Charge`], and
/// their `ResponseCost` is ignored.
async fn no_rule_scenario(s: &Setup) {
    let res = s.send("192.0.2.1", "n1", "/plain?head=80").await;
    assert_eq!(res.headers()["x-had-charge"], "no");
    res.into_body().collect().await.unwrap();
    let res = s.send("192.0.2.1", "n1", "/v1/complete?head=0").await;
    assert_eq!(res.headers()["x-had-charge"], "yes");
    res.into_body().collect().await.unwrap();
    s.left("n1", 100, false).await;
}

/// The per-IP backstop's 429 answers carry a `ResponseCost`: a layer that
/// charged its own answers would spend the key's tokens.
async fn own_answers_scenario(backend: Arc<dyn Backend>, remote: bool, before_end: bool) {
    let s = Setup::with_layer(backend, remote, before_end, |l| {
        l.make_response(|v: &Verdict| {
            let mut res = JsonResponse.make_response(v);
            res.extensions_mut().insert(ResponseCost(30));
            res
        })
    });
    for _ in 0..50 {
        assert_eq!(s.read("o1", "/v1/complete?head=0").await.0, 200);
    }
    for _ in 0..3 {
        assert_eq!(s.read("o1", "/v1/complete?head=0").await.0, 429);
    }
    s.left("o1", 100, false).await;
}

/// Every scenario, each on a backend of its own.
async fn all_scenarios(backends: [Arc<dyn Backend>; 5], remote: bool, before_end: bool) {
    let [a, b, c, d, e] = backends;
    response_cost_scenario(&Setup::new(a, remote, before_end)).await;
    streamed_scenario(&Setup::new(b, remote, before_end)).await;
    dropped_scenario(&Setup::new(c, remote, before_end)).await;
    no_rule_scenario(&Setup::new(d, remote, before_end)).await;
    own_answers_scenario(e, remote, before_end).await;
}

fn memory() -> Arc<dyn Backend> {
    Arc::new(MemoryBackend::default())
}

/// Valkey backends on `url`, each with a key prefix of its own.
async fn valkey(url: &str) -> [Arc<dyn Backend>; 5] {
    let mut out = Vec::new();
    for _ in 0..5 {
        let b = ratelimit_testkit::valkey::injected(url).await;
        out.push(Arc::new(b) as Arc<dyn Backend>);
    }
    out.try_into().unwrap_or_else(|_| unreachable!())
}

#[tokio::test]
async fn charges_on_the_memory_backend() {
    all_scenarios(std::array::from_fn(|_| memory()), false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_on_valkey_before_the_body_ends() {
    let server = ratelimit_testkit::valkey::server();
    all_scenarios(valkey(server.url()).await, true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_on_valkey_in_a_spawned_task() {
    let server = ratelimit_testkit::valkey::server();
    all_scenarios(valkey(server.url()).await, true, false).await;
}
