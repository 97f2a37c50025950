//! A bare hyper 1 server (no axum) behind the rate limit layer.
//!
//! Rules are built in Rust with `RuleBuilder`: a token bucket of 2 requests
//! per minute per IP with a burst of 3. The server accepts connections on
//! 127.0.0.1 (an ephemeral port) with hyper-util's `TowerToHyperService`,
//! inserts each connection's peer address with `SetClientIp`, sends itself 5
//! requests, prints the answers (3 × 200, then 429) and exits.
//!
//! ```text
//! cargo run --example hyper_server
//! ```
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_tower::{RateLimitLayer, SetClientIp};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceBuilder;

async fn hello(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let text = format!("hello from {}\n", req.uri().path());
    Ok(Response::new(Full::new(Bytes::from(text))))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rule = RuleBuilder::new("per-ip")
        .token_bucket(2, Duration::from_secs(60), 3)
        .key(["ip"])
        .ratelimit_headers(true)
        .build()?;
    let layer = RateLimitLayer::from_rules(RuleSet::from_rules(vec![rule])?);
    let svc = ServiceBuilder::new()
        .layer(layer)
        .service(tower::service_fn(hello));

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, peer)) = listener.accept().await {
            // The layer reads the client address from the ClientIp extension.
            let svc = TowerToHyperService::new(SetClientIp::new(svc.clone(), peer.ip()));
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                if let Err(e) = conn.await {
                    println!("connection error: {e}");
                }
            });
        }
    });
    println!("hyper server on http://{addr}\n");

    for i in 1..=5 {
        let stream = TcpStream::connect(addr).await?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        let req = Request::get(format!("/item/{i}"))
            .header("host", addr.to_string())
            .body(Empty::<Bytes>::new())?;
        let res = sender.send_request(req).await?;
        let status = res.status();
        let ratelimit = res
            .headers()
            .get("ratelimit")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned();
        let retry = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned();
        let body = res.into_body().collect().await?.to_bytes();
        println!(
            "GET /item/{i}: {status}  RateLimit: {ratelimit}  Retry-After: {retry}  body: {}",
            String::from_utf8_lossy(&body).trim_end()
        );
    }
    Ok(())
}
