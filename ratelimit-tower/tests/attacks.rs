//! Replays of the attacks of issue 15 over real HTTP through axum: each test
//! fails without its fix.

mod support;

use std::net::SocketAddr;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http::HeaderValue;
use http_body_util::Full;
use ratelimit_tower::{Cidr, RateLimitLayer, TrustedProxies};
use support::*;

fn router(layer: RateLimitLayer) -> Router {
    Router::new()
        .route("/", get(ok))
        .route("/login", get(ok))
        .fallback(ok)
        .layer(layer)
}

async fn serve(json: &str, f: impl FnOnce(RateLimitLayer) -> RateLimitLayer) -> SocketAddr {
    serve_axum(router(f(layer(json, &clock())))).await
}

/// `GET path` with the raw header values given.
async fn get_raw(addr: SocketAddr, path: &str, headers: &[(&str, &[u8])]) -> u16 {
    let mut b = request("GET", path);
    for (n, v) in headers {
        b = b.header(*n, HeaderValue::from_bytes(v).unwrap());
    }
    send(addr, b.body(Full::<Bytes>::default()).unwrap())
        .await
        .status
        .as_u16()
}

const PER_IP: &str = r#"[{"id": "per-ip", "expression": "true", "algorithm": "fixed_window",
    "limit": 2, "period": "1m", "key": ["ip"]}]"#;

/// Item 1: behind a proxy that appends to `X-Forwarded-For` (the test
/// client on 127.0.0.1 plays it), a client's `"x` or non-UTF-8 bytes made
/// the whole line unreadable and the client was keyed as the proxy: it spent
/// the proxy's bucket and locked out the proxy's own health checks.
#[tokio::test]
async fn a_client_cannot_become_the_proxy() {
    let loopback = TrustedProxies::cidrs(["127.0.0.0/8".parse::<Cidr>().unwrap()]);
    for attack in [&b"\"x, 203.0.113.50"[..], b"\xff\xfe, 203.0.113.50"] {
        let addr = serve(PER_IP, |l| l.trusted_proxies(loopback.clone())).await;
        let xff = [("x-forwarded-for", attack)];
        let got = [
            get_raw(addr, "/", &xff).await,
            get_raw(addr, "/", &xff).await,
            get_raw(addr, "/", &xff).await,
        ];
        assert_eq!(got, [200, 200, 429], "the client has its own limit");
        // The proxy's health check, with no forwarding header.
        assert_eq!(get_raw(addr, "/", &[]).await, 200, "{attack:?}");
    }
    let fwd = TrustedProxies::hops(1).header(ratelimit_tower::ForwardedHeader::Forwarded);
    let addr = serve(PER_IP, |l| l.trusted_proxies(fwd)).await;
    let line = [("forwarded", &b"for=\"x, for=203.0.113.50"[..])];
    for _ in 0..3 {
        get_raw(addr, "/", &line).await;
    }
    assert_eq!(get_raw(addr, "/", &[]).await, 200);
}

const PHP: &str = r#"[{"id": "php", "expression": "ends_with(http.request.uri.path, \".php\")",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]},
   {"id": "op", "expression": "http.request.uri.query contains \"op=login\"",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]},
   {"id": "hdr", "expression": "ends_with(http.request.headers[\"x-op\"], \"login\")",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]}]"#;

/// Item 3: rules read a 16 KiB prefix of the path, query and header values
/// while the application saw them whole: 5 of 5 passed a limit of 2.
#[tokio::test]
async fn long_uris_and_headers_are_refused_not_cut() {
    let addr = serve(PHP, |l| l).await;
    let pad = "a".repeat(16 * 1024 + 400);
    let long_path = format!("/{pad}.php");
    let long_query = format!("/?pad={pad}&op=login");
    for uri in [&long_path, &long_query] {
        let got: Vec<u16> = statuses(addr, uri, 5).await;
        assert!(got.iter().all(|&s| s == 414), "{got:?}");
    }
    let value = format!("{}login", "a".repeat(8 * 1024));
    let header = [("x-op", value.as_bytes())];
    for _ in 0..5 {
        assert_eq!(get_raw(addr, "/", &header).await, 431);
    }
    // Short ones are limited as before.
    assert_eq!(statuses(addr, "/x.php", 3).await, [200, 200, 429]);

    // A larger bound: the whole value is read and limited.
    let addr = serve(PHP, |l| l.max_uri_bytes(32 * 1024)).await;
    assert_eq!(statuses(addr, &long_path, 3).await, [200, 200, 429]);
}

const GET_ONLY: &str = r#"[{"id": "get", "expression": "http.request.method eq \"GET\"",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]}]"#;
const GET_HEAD: &str = r#"[{"id": "get", "expression": "http.request.method in {\"GET\" \"HEAD\"}",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]}]"#;

/// Item 9: axum serves HEAD with the GET handler, so a limit on GET alone
/// is bypassed with HEAD; `in {"GET" "HEAD"}` covers both.
#[tokio::test]
async fn head_reaches_get_handlers_and_in_covers_both() {
    let head = |addr| async move {
        let req = request("HEAD", "/").body(Full::<Bytes>::default()).unwrap();
        send(addr, req).await.status.as_u16()
    };
    let addr = serve(GET_ONLY, |l| l).await;
    let got = [head(addr).await, head(addr).await, head(addr).await];
    assert_eq!(got, [200, 200, 200], "eq \"GET\" does not see HEAD");
    let addr = serve(GET_HEAD, |l| l).await;
    let got = [
        head(addr).await,
        hit(addr, "/").await.status.as_u16(),
        head(addr).await,
    ];
    assert_eq!(got, [200, 200, 429]);
}

const API_HOST: &str = r#"[{"id": "api", "expression": "http.host eq \"api.example.com\"",
    "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"]}]"#;

/// Item 10: `Host: api.example.com.` escaped `http.host eq
/// "api.example.com"`, and an absolute-form target's authority lost to the
/// `Host` header.
#[tokio::test]
async fn host_matching_is_normalized_and_the_target_authority_wins() {
    let addr = serve(API_HOST, |l| l).await;
    let hosts: [&[u8]; 3] = [
        b"api.example.com.",
        b"API.Example.com.:8080",
        b"api.example.com",
    ];
    let mut got = Vec::new();
    for h in hosts {
        let req = http::Request::get("/")
            .header("host", HeaderValue::from_bytes(h).unwrap())
            .body(Full::<Bytes>::default())
            .unwrap();
        got.push(send(addr, req).await.status.as_u16());
    }
    assert_eq!(got, [200, 200, 429]);

    let addr = serve(API_HOST, |l| l).await;
    let absolute = |addr| async move {
        let head = b"GET http://api.example.com/ HTTP/1.1\r\nhost: other.example\r\n\r\n";
        raw_status(addr, head).await
    };
    let got = [
        absolute(addr).await,
        absolute(addr).await,
        absolute(addr).await,
    ];
    assert_eq!(got, [200, 200, 429]);
}

/// The status of the answer to `head`, written as is on a new connection.
async fn raw_status(addr: SocketAddr, head: &[u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = stream.read(&mut buf).await.unwrap();
    let line = String::from_utf8_lossy(&buf[..n]);
    line.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

const TENANT: &str = r#"[{"id": "tenant", "expression": "true", "algorithm": "fixed_window",
    "limit": 100, "period": "1m", "key": ["ip", "header:x-tenant"],
    "on_missing_key": "reject"}]"#;

/// Item 12: an empty header value counted as present and passed
/// `on_missing_key: reject`.
#[tokio::test]
async fn an_empty_header_is_a_missing_key() {
    let addr = serve(TENANT, |l| l).await;
    assert_eq!(get_raw(addr, "/", &[("x-tenant", b"")]).await, 400);
    assert_eq!(get_raw(addr, "/", &[("x-tenant", b"  ")]).await, 400);
    assert_eq!(get_raw(addr, "/", &[("x-tenant", b"acme")]).await, 200);
}
