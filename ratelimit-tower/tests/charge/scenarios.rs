//! The scenarios, on the in-memory backend and on Valkey (awaited before
//! the body ends, and spawned).

use std::sync::Arc;

use http_body_util::BodyExt;
use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::Limiter;
use ratelimit_core::Verdict;
use ratelimit_tower::{Charge, JsonResponse, MakeResponse, RateLimitLayer, ResponseCost};
use tower::{Layer, ServiceExt};

use crate::support::{advance, clock, hit_with, rules, serve_axum};
use crate::{Completion, Setup, RULES};

/// A cost on the response head is charged when the body ends; once the
/// total passes the limit the next request is refused until the window
/// ends.
async fn response_cost_scenario(s: &Setup) {
    // The request itself counts nothing, and a cost of 0 charges nothing.
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

/// Through axum and hyper over TCP: a streamed completion of 60 tokens is
/// charged before its last chunk goes out, so the client's next request
/// sees it.
#[tokio::test]
async fn charges_through_a_real_server() {
    async fn completion(req: axum::extract::Request) -> axum::response::Response {
        let charge = req.extensions().get::<Charge>().cloned();
        let body = Completion {
            left: 3,
            each: 20,
            charge,
            trailers: false,
        };
        axum::response::Response::new(axum::body::Body::new(body))
    }
    let limiter = Limiter::builder(rules(RULES)).clock(clock()).build();
    let app = axum::Router::new()
        .route("/v1/complete", axum::routing::get(completion))
        .layer(RateLimitLayer::new(limiter));
    let addr = serve_axum(app).await;
    let key = [("x-api-key", "tcp")];
    for _ in 0..2 {
        let r = hit_with(addr, "/v1/complete", &key).await;
        assert_eq!(
            (r.status.as_u16(), r.body.as_str()),
            (200, "token token token ")
        );
    }
    let r = hit_with(addr, "/v1/complete", &key).await;
    assert_eq!(
        (r.status.as_u16(), r.header("retry-after")),
        (429, Some("60")),
        "120 tokens charged of 100"
    );
}

/// Two layers with `charge: response` rules, one inside the other: the
/// inner one keeps the outer one's `Charge`, so what a streamed body adds
/// is charged to the rules of both.
#[tokio::test]
async fn nested_layers_charge_one_streamed_total() {
    let inner_rules = r#"[{"id": "inner", "expression": "true",
        "algorithm": "fixed_window", "limit": 100, "period": "1m",
        "key": ["ip"], "charge": "response"}]"#;
    let inner = Limiter::builder(rules(inner_rules)).clock(clock()).build();
    let outer = Setup::new(memory(), false, false);
    let svc = RateLimitLayer::new(outer.limiter.clone())
        .layer(RateLimitLayer::new(inner.clone()).layer(tower::service_fn(crate::upstream)));
    let mut req = http::Request::get("/v1/stream?chunks=3&each=10")
        .header("x-api-key", "n2")
        .body(String::new())
        .unwrap();
    req.extensions_mut()
        .insert(ratelimit_core::ClientIp("192.0.2.1".parse().unwrap()));
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200);
    res.into_body().collect().await.unwrap();
    outer.left("n2", 70, false).await;
    let attrs = ratelimit_core::RequestAttrs::new("192.0.2.1".parse().unwrap());
    let d = inner.peek("inner", &attrs).await.unwrap();
    assert_eq!(d.remaining, 70, "the inner layer's rule");
}
