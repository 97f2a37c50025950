//! Shared by the integration tests: servers on 127.0.0.1:0, a hyper client
//! over TCP, a manual clock, a backend that is down.
#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock};
use ratelimit_tower::{RateLimitLayer, ResponseBody, SetClientIp};
use tokio::net::TcpListener;

/// 2026-01-01T00:00:00Z, on a minute.
pub const T0: u64 = 1_767_225_600_000;

/// A clock at [`T0`].
pub fn clock() -> ManualClock {
    ManualClock::new(T0)
}

/// Rules from JSON, judged at [`T0`].
pub fn rules(json: &str) -> RuleSet {
    RuleSet::from_json_at(json, T0).unwrap()
}

/// A layer over an in-memory limiter on `clock`.
pub fn layer(json: &str, clock: &ManualClock) -> RateLimitLayer {
    let limiter = Limiter::builder(rules(json)).clock(clock.clone()).build();
    RateLimitLayer::new(limiter)
}

/// Moves `clock` forward by whole seconds.
pub fn advance(clock: &ManualClock, secs: u64) {
    clock.advance(Duration::from_secs(secs));
}

/// Serves `app` with `ConnectInfo<SocketAddr>` on an ephemeral loopback port.
pub async fn serve_axum(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let svc = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, svc).await.unwrap();
    });
    addr
}

/// Serves a tower service with bare hyper 1 (no axum) on an ephemeral
/// loopback port, inserting the peer address with [`SetClientIp`].
pub async fn serve_hyper<S, B>(svc: S) -> SocketAddr
where
    S: tower::Service<Request<hyper::body::Incoming>, Response = Response<ResponseBody<B>>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: std::error::Error + Send + Sync + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let svc = SetClientIp::new(svc.clone(), peer.ip());
            let svc = hyper_util::service::TowerToHyperService::new(svc);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

/// What came back.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Sends `req` to `addr` over a fresh TCP connection.
pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Reply {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let res = sender.send_request(req).await.unwrap();
    let (parts, body) = res.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// A request builder for `path` with a `Host`.
pub fn request(method: &str, path: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "test.local")
}

/// `GET path`.
pub async fn hit(addr: SocketAddr, path: &str) -> Reply {
    send(addr, request("GET", path).body(Full::default()).unwrap()).await
}

/// `GET path` with extra headers.
pub async fn hit_with(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut b = request("GET", path);
    for (n, v) in headers {
        b = b.header(*n, *v);
    }
    send(addr, b.body(Full::default()).unwrap()).await
}

/// The statuses of `n` `GET path`.
pub async fn statuses(addr: SocketAddr, path: &str, n: usize) -> Vec<u16> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(hit(addr, path).await.status.as_u16());
    }
    out
}

/// A backend that never answers: every check fails.
#[derive(Debug)]
pub struct DownBackend;

impl Backend for DownBackend {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        let out = batch
            .checks
            .iter()
            .map(|_| Err(BackendError::new(BackendErrorKind::Connection, "down")))
            .collect();
        Box::pin(std::future::ready(out))
    }
}

/// A handler answering `200 ok`.
pub async fn ok() -> &'static str {
    "ok"
}

/// A plain tower handler for `ServiceBuilder` and hyper tests.
pub async fn hello<B>(_req: Request<B>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(b"hello"))))
}
