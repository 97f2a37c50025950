//! Quickstart: an axum app behind a login rate limit, talking to itself.
//!
//! The rule is a sliding window of 5 logins per minute per client IP, with
//! `RateLimit` headers and a 5-minute penalty, on the in-memory backend. The
//! example starts the app on 127.0.0.1 (an ephemeral port), sends it 8 logins
//! over TCP with a hyper client, prints each status, `Retry-After` and
//! `RateLimit` header, and exits: five 200s, then 429s.
//!
//! ```text
//! cargo run --example quickstart
//! ```
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;

use axum::routing::post;
use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use ratelimit_tower::RateLimitLayer;
use tokio::net::{TcpListener, TcpStream};

const RULES: &str = r#"[{
    "id": "login",
    "expression": "http.request.uri.path eq \"/login\"",
    "algorithm": "sliding_window",
    "limit": 5,
    "period": "1m",
    "key": ["ip"],
    "on_missing_key": "fallback_ip",
    "action": "block",
    "penalty": "5m",
    "fail_mode": "open",
    "ratelimit_headers": true
}]"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let layer = RateLimitLayer::from_json_str(RULES)?;
    let app = Router::new()
        .route("/login", post(|| async { "welcome back\n" }))
        .layer(layer.for_axum());

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        // ConnectInfo<SocketAddr> gives the layer the client's address.
        let make = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, make).await
    });
    println!("app listening on http://{addr}; sending 8 logins\n");

    let stream = TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    for i in 1..=8 {
        sender.ready().await?;
        let req = http::Request::post("/login")
            .header("host", addr.to_string())
            .body(Empty::<Bytes>::new())?;
        let res = sender.send_request(req).await?;
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned()
        };
        let (status, retry, policy, current) = (
            res.status(),
            header("retry-after"),
            header("ratelimit-policy"),
            header("ratelimit"),
        );
        let body = res.into_body().collect().await?.to_bytes();
        println!("login #{i}: {status}");
        println!("  Retry-After: {retry}");
        println!("  RateLimit-Policy: {policy}");
        println!("  RateLimit: {current}");
        println!("  body: {}", String::from_utf8_lossy(&body).trim_end());
    }
    Ok(())
}
