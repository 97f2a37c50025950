//! nginx_limits: the classic `/wp-login.php` and `/downloads/` limits, in axum.
//!
//! It starts an axum app on 127.0.0.1:0 configured with the nginx lines
//!
//!     limit_req_zone $client_ip zone=perip:10m rate=10r/s;
//!     limit_conn_zone $client_ip zone=conns:10m;
//!     location = /wp-login.php { limit_req zone=perip burst=2 nodelay; limit_req_status 429; }
//!     location /downloads/     { limit_conn conns 4; }
//!
//! then sends itself four password guesses at once (three pass: the first
//! into the empty bucket and a burst of two; the fourth gets 429), five
//! downloads at once (four pass, the fifth gets 503 while they are in
//! progress) and a request to `/` (not limited). It prints each status and exits.
//!
//! Run it with `cargo run -p ratelimit-examples --example nginx_limits`.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Extension};
use axum::routing::{get, post};
use axum::Router;
use ratelimit_core::nginx::{ConfigError, Level, LimitReqStatus, NginxConfig, ZoneRegistry};
use ratelimit_tower::nginx::{LimitConnLayer, LimitReqLayer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const ZONES: &str = "
    limit_req_zone $client_ip zone=perip:10m rate=10r/s;
    limit_conn_zone $client_ip zone=conns:10m;
";
const WP_LOGIN: &str = "limit_req zone=perip burst=2 nodelay;\nlimit_req_status 429;";
const DOWNLOADS: &str = "limit_conn conns 4;";

/// The peer address axum puts on each request.
fn peer(extensions: &http::Extensions) -> Option<SocketAddr> {
    extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0)
}

fn app() -> Result<Router, ConfigError> {
    let zones = ZoneRegistry::global().load(&NginxConfig::parse(ZONES)?)?;
    let login = LimitReqLayer::new(zones.limit_req(&Level::parse(WP_LOGIN)?)?).with_peer_addr(peer);
    let downloads =
        LimitConnLayer::new(zones.limit_conn(&Level::parse(DOWNLOADS)?)?).with_peer_addr(peer);
    Ok(Router::new()
        .route(
            "/wp-login.php",
            // The handler sees $limit_req_status as a request extension.
            post(|status: Option<Extension<LimitReqStatus>>| async move {
                let status = status.map_or("-", |Extension(s)| s.as_str());
                format!("wrong password (limit_req_status={status})")
            })
            .route_layer(login),
        )
        .route(
            "/downloads/{*file}",
            get(|| async {
                // The download is in progress for half a second.
                tokio::time::sleep(Duration::from_millis(500)).await;
                "file contents"
            })
            .route_layer(downloads),
        )
        .route("/", get(|| async { "home, not limited" })))
}

/// Sends one request over its own connection; returns the status line's code and the body.
async fn send(addr: SocketAddr, method: &str, path: &str) -> std::io::Result<(String, String)> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!("{method} {path} HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let text = String::from_utf8_lossy(&response);
    let status = text.split(' ').nth(1).unwrap_or("?").to_owned();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Ok((status, body))
}

async fn at_once(
    addr: SocketAddr,
    n: usize,
    method: &'static str,
    path: &'static str,
) -> std::io::Result<()> {
    let sent: Vec<_> = (0..n)
        .map(|_| tokio::spawn(send(addr, method, path)))
        .collect();
    for (i, request) in sent.into_iter().enumerate() {
        let (status, body) = request.await.map_err(std::io::Error::other)??;
        println!("  #{} {method} {path} -> {status} {body}", i + 1);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let service = app()?.into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await });
    println!("serving on http://{addr}");

    println!("four password guesses at once (burst=2 nodelay, limit_req_status 429):");
    at_once(addr, 4, "POST", "/wp-login.php").await?;
    println!("five downloads at once (limit_conn conns 4):");
    at_once(addr, 5, "GET", "/downloads/big.iso").await?;
    println!("the rest of the site:");
    at_once(addr, 1, "GET", "/").await?;
    Ok(())
}
