//! The `nginx_limits` example's configuration in axum, over real TCP on 127.0.0.1: a burst of
//! two password guesses on /wp-login.php passes and the next gets 429; four
//! downloads at a time pass and a fifth gets 503; the rest is not limited.
//! The layers find the peer in axum's `ConnectInfo<SocketAddr>` with no
//! configuration.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::body::Body;
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use http_body::Frame;
use ratelimit_nginx::{Level, NginxConfig, ZoneRegistry};
use ratelimit_nginx::{LimitConnLayer, LimitReqLayer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

const SEED: &str = "limit_req_zone $client_ip zone=perip:10m rate=10r/s;\n\
                    limit_conn_zone $client_ip zone=conns:10m;";

/// A download body that sends its data once the gate opens.
struct Download {
    gate: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl http_body::Body for Download {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.gate.as_mut() {
            Some(gate) => {
                ready!(gate.as_mut().poll(cx));
                self.gate = None;
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"file")))))
            }
            None => Poll::Ready(None),
        }
    }
}

async fn serve(open: watch::Receiver<bool>) -> SocketAddr {
    let zones = ZoneRegistry::new()
        .load(&NginxConfig::parse(SEED).expect("config"))
        .expect("zones");
    let login = Level::parse("limit_req zone=perip burst=2 nodelay;\nlimit_req_status 429;")
        .expect("login");
    let downloads = Level::parse("limit_conn conns 4;").expect("downloads");
    let login = LimitReqLayer::new(zones.limit_req(&login).expect("policy"));
    let downloads = LimitConnLayer::new(zones.limit_conn(&downloads).expect("policy"));
    let download = move || {
        let mut open = open.clone();
        async move {
            let gate = async move {
                while !*open.borrow_and_update() {
                    if open.changed().await.is_err() {
                        return;
                    }
                }
            };
            Body::new(Download {
                gate: Some(Box::pin(gate)),
            })
        }
    };
    let app = Router::new()
        .route(
            "/wp-login.php",
            post(|| async { "wrong password" }).route_layer(login),
        )
        .route("/downloads/{*file}", get(download).route_layer(downloads))
        .route("/", get(|| async { "home" }));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service).await.expect("serve");
    });
    addr
}

/// Sends a request and reads up to the end of the response head.
async fn send(addr: SocketAddr, method: &str, path: &str) -> (u16, TcpStream) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!("{method} {path} HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).await.expect("read");
        assert!(
            n > 0,
            "connection closed in the head: {}",
            String::from_utf8_lossy(&got)
        );
        got.push(byte[0]);
    }
    let status = String::from_utf8_lossy(&got)
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status line");
    (status, stream)
}

async fn status_of(addr: SocketAddr, method: &str, path: &str) -> u16 {
    let (status, mut stream) = send(addr, method, path).await;
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.expect("body");
    status
}

#[tokio::test]
async fn the_seed_wp_login_burst_passes_two_guesses_and_refuses_the_next_with_429() {
    let (_open, gate) = watch::channel(true);
    let addr = serve(gate).await;
    // Sent at once, so that 10r/s drains next to nothing meanwhile.
    let guesses: Vec<_> = (0..4)
        .map(|_| tokio::spawn(status_of(addr, "POST", "/wp-login.php")))
        .collect();
    let mut statuses = Vec::new();
    for g in guesses {
        statuses.push(g.await.expect("join"));
    }
    statuses.sort_unstable();
    // The first request into the empty bucket, then the burst of two.
    assert_eq!(statuses, [200, 200, 200, 429]);
    assert_eq!(
        status_of(addr, "GET", "/").await,
        200,
        "the rest of the site is not limited"
    );
}

#[tokio::test]
async fn the_seed_downloads_allow_four_in_progress_per_client() {
    let (open, gate) = watch::channel(false);
    let addr = serve(gate).await;
    let mut in_progress = Vec::new();
    for _ in 0..4 {
        let (status, stream) = send(addr, "GET", "/downloads/big.iso").await;
        assert_eq!(status, 200);
        in_progress.push(stream);
    }
    assert_eq!(
        status_of(addr, "GET", "/downloads/big.iso").await,
        503,
        "a fifth download at once"
    );
    assert_eq!(
        status_of(addr, "POST", "/wp-login.php").await,
        200,
        "other routes are not counted"
    );
    open.send(true).expect("open the gate");
    for mut stream in in_progress {
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.expect("body");
        assert!(String::from_utf8_lossy(&rest).contains("file"));
    }
    // The counts were given back when the bodies ended.
    let mut after = Vec::new();
    for _ in 0..3 {
        after.push(status_of(addr, "GET", "/downloads/big.iso").await);
    }
    assert_eq!(after, [200, 200, 200]);
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_download_frees_its_slot() {
    let (_open, gate) = watch::channel(false);
    let addr = serve(gate).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(send(addr, "GET", "/downloads/a").await.1);
    }
    assert_eq!(status_of(addr, "GET", "/downloads/a").await, 503);
    drop(held.pop());
    // The server notices the closed connection and drops the response body.
    let mut status = 503;
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let (s, stream) = send(addr, "GET", "/downloads/a").await;
        status = s;
        if status == 200 {
            held.push(stream);
            break;
        }
    }
    assert_eq!(status, 200);
}
