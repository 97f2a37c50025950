//! The over-limit cache through the layer: a flood from one client over
//! its limit is answered 429 locally, with the Retry-After to its earliest
//! admission and the RateLimit headers at remaining 0, without a backend
//! call per request.

mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::routing::{get, MethodRouter};
use axum::Router;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, BoxFuture, CheckResult};
use ratelimit_core::{Limiter, ManualClock};
use ratelimit_tower::RateLimitLayer;
use support::*;

/// The in-memory backend, counting the batches it is asked.
#[derive(Debug, Default)]
struct Counting {
    inner: MemoryBackend,
    calls: AtomicUsize,
}

impl Backend for Counting {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.check(batch)
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.hash_key()
    }
}

/// A server of `route` behind the layer over `rules_json`, on a counting
/// in-memory backend and a manual clock.
async fn serve_counted(
    rules_json: &str,
    path: &str,
    route: MethodRouter,
) -> (SocketAddr, ManualClock, Arc<Counting>) {
    let clock = clock();
    let backend = Arc::new(Counting::default());
    let limiter = Limiter::builder(rules(rules_json))
        .clock(clock.clone())
        .backend_arc(backend.clone())
        .build();
    let app = Router::new()
        .route(path, route)
        .layer(RateLimitLayer::new(limiter));
    (serve_axum(app).await, clock, backend)
}

const SEARCH: &str = r#"[{"id": "search", "expression": "http.request.uri.path eq \"/search\"",
    "algorithm": "sliding_window", "limit": 2, "period": "1m", "key": ["ip"],
    "ratelimit_headers": true}]"#;

#[tokio::test]
async fn a_flood_over_the_limit_is_refused_without_backend_calls() {
    let (addr, clock, backend) = serve_counted(SEARCH, "/search", get(ok)).await;
    assert_eq!(statuses(addr, "/search", 2).await, [200; 2]);
    let r = hit(addr, "/search").await;
    assert_eq!(
        (r.status.as_u16(), r.header("retry-after")),
        (429, Some("90"))
    );
    assert_eq!(backend.calls.load(Ordering::SeqCst), 3);
    advance(&clock, 15);
    for _ in 0..50 {
        let r = hit(addr, "/search").await;
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after"), Some("75"), "T - now");
        assert_eq!(r.header("ratelimit-policy"), Some(r#""search";q=2;w=60"#));
        let current = r.header("ratelimit").unwrap();
        assert!(current.starts_with(r#""search";r=0;"#), "{current}");
    }
    assert_eq!(backend.calls.load(Ordering::SeqCst), 3, "answered locally");
    // At the earliest admission the backend is asked again, and admits.
    advance(&clock, 75);
    assert_eq!(hit(addr, "/search").await.status, 200);
    assert_eq!(backend.calls.load(Ordering::SeqCst), 4);
}

/// 10 tokens a minute per client, charged after the response, with a
/// penalty: a request is asked as a probe of cost 1, which starts no
/// penalty even when refused.
const TOKENS: &str = r#"[{"id": "tokens", "expression": "true", "algorithm": "fixed_window",
    "limit": 10, "period": "1m", "key": ["ip"], "charge": "response", "penalty": "5m"}]"#;

/// The upstream: `?cost=N` charges N after the response.
async fn spend(req: axum::extract::Request) -> axum::response::Response {
    let cost = req
        .uri()
        .query()
        .and_then(|q| q.strip_prefix("cost="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut res = axum::response::IntoResponse::into_response("ok");
    res.extensions_mut()
        .insert(ratelimit_tower::ResponseCost(cost));
    res
}

#[tokio::test]
async fn a_flood_of_probes_under_a_penalty_rule_is_refused_without_backend_calls() {
    let (addr, clock, backend) = serve_counted(TOKENS, "/spend", get(spend)).await;
    // The whole budget, charged after the response: it fits, so no
    // penalty starts (the probe, then the charge).
    assert_eq!(hit(addr, "/spend?cost=10").await.status, 200);
    for _ in 0..200 {
        if backend.calls.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(backend.calls.load(Ordering::SeqCst), 2, "probe and charge");
    // The next probe is refused by the backend (the bucket is spent, no
    // penalty running); the flood after it is answered locally.
    for _ in 0..50 {
        let r = hit(addr, "/spend").await;
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after"), Some("60"));
    }
    assert_eq!(backend.calls.load(Ordering::SeqCst), 3, "answered locally");
    // The next window admits, asking the backend again (a probe; a cost
    // of 0 charges nothing).
    advance(&clock, 60);
    assert_eq!(hit(addr, "/spend").await.status, 200);
    assert_eq!(backend.calls.load(Ordering::SeqCst), 4);
}
