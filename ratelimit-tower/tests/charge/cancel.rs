//! A request cancelled while its handler works (the client hung up, so
//! hyper drops the response future) is charged what the handler added to
//! its [`Charge`], as a body dropped before its end is (issue 27.5).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::{ClientIp, Limiter, RequestAttrs};
use ratelimit_tower::{Charge, RateLimitLayer};
use tokio::io::AsyncWriteExt;
use tower::{Layer, ServiceExt};

use crate::support::{clock, hit, rules, serve_axum};

/// 1000 units a minute per IP, charged after the response.
const RULES: &str = r#"[{"id": "work", "expression": "true",
    "algorithm": "fixed_window", "limit": 1000, "period": "1m",
    "key": ["ip"], "charge": "response"}]"#;

fn limiter(backend: Arc<dyn Backend>) -> Limiter {
    Limiter::builder(rules(RULES))
        .clock(clock())
        .backend_arc(backend)
        .build()
}

/// Waits (up to 2 s: a charge on Valkey runs in a spawned task) until
/// `ip` has `want` units left.
async fn left(limiter: &Limiter, ip: &str, want: u64) {
    let attrs = RequestAttrs::new(ip.parse().unwrap());
    let mut got = 0;
    for _ in 0..400 {
        got = limiter.peek("work", &attrs).await.unwrap().remaining;
        if got == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{ip}: {got} units left, want {want}");
}

/// A handler that adds 1000 to its `Charge`, then works longer than the
/// client waits.
async fn slow(req: Request<String>) -> Result<Response<String>, std::convert::Infallible> {
    let charge = req.extensions().get::<Charge>().cloned();
    charge.expect("a charge: response rule matched").add(1000);
    tokio::time::sleep(Duration::from_secs(30)).await;
    Ok(Response::new(String::from("done")))
}

/// The response future is dropped while the handler works: the 1000 it
/// added are charged, and the client's next request is refused.
async fn dropped_future_scenario(backend: Arc<dyn Backend>) {
    let limiter = limiter(backend);
    let svc = RateLimitLayer::new(limiter.clone()).layer(tower::service_fn(slow));
    let mut req = Request::new(String::new());
    req.extensions_mut()
        .insert(ClientIp("192.0.2.9".parse().unwrap()));
    let call = svc.clone().oneshot(req);
    let waited = tokio::time::timeout(Duration::from_millis(150), call).await;
    assert!(waited.is_err(), "the handler is still working");
    left(&limiter, "192.0.2.9", 0).await;
    let mut req = Request::new(String::new());
    req.extensions_mut()
        .insert(ClientIp("192.0.2.9".parse().unwrap()));
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(
        res.status(),
        429,
        "the cancelled request's work was paid for"
    );
}

#[tokio::test]
async fn a_dropped_response_future_charges_what_was_added_in_memory() {
    dropped_future_scenario(Arc::new(MemoryBackend::default())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_response_future_charges_what_was_added_on_valkey() {
    let server = ratelimit_testkit::valkey::server();
    let backend = ratelimit_testkit::valkey::injected(server.url()).await;
    dropped_future_scenario(Arc::new(backend)).await;
}

/// Adds 1000 to the request's `Charge`, then works for 500 ms.
async fn handler(req: axum::extract::Request) -> &'static str {
    if let Some(charge) = req.extensions().get::<Charge>() {
        charge.add(1000);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    "done"
}

/// Over TCP through axum and hyper: the handler adds 1000 and works for
/// 500 ms; the client hangs up after 150 ms. The next request is refused.
#[tokio::test]
async fn a_client_that_hangs_up_mid_handler_pays_for_the_work() {
    let limiter = limiter(Arc::new(MemoryBackend::default()));
    let app = axum::Router::new()
        .route("/work", axum::routing::get(handler))
        .layer(RateLimitLayer::new(limiter.clone()));
    hang_up_scenario(&limiter, serve_axum(app).await).await;
}

/// The same with the layer `for_axum()`.
#[tokio::test]
async fn a_client_that_hangs_up_mid_handler_pays_for_the_work_for_axum() {
    let limiter = limiter(Arc::new(MemoryBackend::default()));
    let app = axum::Router::new()
        .route("/work", axum::routing::get(handler))
        .layer(RateLimitLayer::new(limiter.clone()).for_axum());
    hang_up_scenario(&limiter, serve_axum(app).await).await;
}

/// A raw client sends `GET /work` to `addr` and hangs up after 150 ms;
/// the handler's 1000 are charged, and the next request is refused.
async fn hang_up_scenario(limiter: &Limiter, addr: SocketAddr) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /work HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    drop(stream);
    left(limiter, "127.0.0.1", 0).await;
    let r = hit(addr, "/work").await;
    assert_eq!(
        (r.status.as_u16(), r.header("retry-after")),
        (429, Some("60"))
    );
}
