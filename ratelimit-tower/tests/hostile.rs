//! Hostile requests never panic, stay bounded and are answered correctly:
//! 64 KiB headers, invalid UTF-8, thousands of repeated headers, cookies and
//! query arguments.

mod support;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http::{HeaderValue, Request};
use http_body_util::Full;
use ratelimit_tower::{ClientIp, RateLimitLayer};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::{service_fn, ServiceBuilder, ServiceExt};

const KEYED: &str = r#"[
    {"id": "by-header", "expression": "http.request.uri.path eq \"/h\"",
     "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip", "header:x-tenant"]},
    {"id": "by-cookie", "expression": "http.request.uri.path eq \"/c\"",
     "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip", "cookie:sid"]},
    {"id": "by-query", "expression": "http.request.uri.path eq \"/q\"",
     "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip", "query:a"]},
    {"id": "paths", "expression": "starts_with(http.request.uri.path, \"/p\")",
     "algorithm": "distinct", "distinct_of": "path", "limit": 1000, "period": "1m", "key": ["ip"]}
]"#;

fn app(layer: RateLimitLayer) -> Router {
    Router::new()
        .route("/h", get(ok))
        .route("/c", get(ok))
        .route("/q", get(ok))
        .route("/p/{*rest}", get(ok))
        .layer(layer)
}

async fn oneshot(layer: &RateLimitLayer, req: Request<Full<Bytes>>) -> u16 {
    let svc = ServiceBuilder::new()
        .layer(layer.clone())
        .service(service_fn(hello));
    svc.oneshot(req).await.unwrap().status().as_u16()
}

fn from_client(uri: &str) -> http::request::Builder {
    Request::builder()
        .uri(uri)
        .extension(ClientIp("192.0.2.1".parse().unwrap()))
}

#[tokio::test]
async fn a_64_kib_header_is_answered_over_tcp() {
    let clock = clock();
    let addr = serve_axum(app(layer(KEYED, &clock))).await;
    let big_a = "a".repeat(64 * 1024);
    let big_b = "b".repeat(64 * 1024);
    // A header no rule reads may be large.
    let r = hit_with(addr, "/h", &[("x-tenant", "a"), ("x-filler", &big_b)]).await;
    assert_eq!(r.status, 200);
    let r = hit_with(addr, "/h", &[("x-tenant", "a")]).await;
    assert_eq!(r.status, 429);
    // One the rules read is refused whole rather than cut (431).
    let r = hit_with(addr, "/h", &[("x-tenant", &big_a)]).await;
    assert_eq!(r.status, 431);
    let r = hit_with(addr, "/h", &[("x-tenant", &big_b)]).await;
    assert_eq!(r.status, 431);
}

#[tokio::test]
async fn invalid_utf8_header_values_are_keyed_on_their_bytes() {
    let clock = clock();
    let addr = serve_axum(app(layer(KEYED, &clock))).await;
    let send_bin = |bytes: &'static [u8], cookie: &'static [u8]| {
        let mut req = request("GET", "/h").body(Full::default()).unwrap();
        let h = req.headers_mut();
        h.insert("x-tenant", HeaderValue::from_bytes(bytes).unwrap());
        h.insert("cookie", HeaderValue::from_bytes(cookie).unwrap());
        send(addr, req)
    };
    assert_eq!(send_bin(b"\xff\xfe", b"sid=\xc3\x28").await.status, 200);
    assert_eq!(send_bin(b"\xff\xfe", b"\x80=\x80").await.status, 429);
    assert_eq!(send_bin(b"\xff\xfd", b"").await.status, 200);
}

#[tokio::test]
async fn thousands_of_repeated_headers_cookies_and_arguments() {
    let clock = clock();
    let layer = layer(KEYED, &clock);
    let build = |uri: &str, first: &str| {
        let mut req = from_client(uri).body(Full::default()).unwrap();
        let h = req.headers_mut();
        h.append("x-tenant", HeaderValue::from_str(first).unwrap());
        h.append(
            "cookie",
            HeaderValue::from_str(&format!("sid={first}")).unwrap(),
        );
        for i in 0..5_000 {
            h.append("x-tenant", HeaderValue::from_str(&format!("t{i}")).unwrap());
        }
        // Cookie lines are all read: as many as the bounds hold.
        for i in 0..200 {
            h.append(
                "cookie",
                HeaderValue::from_str(&format!("sid=s{i}; c{i}=v")).unwrap(),
            );
        }
        req
    };
    // The first value keys the rule, whatever follows.
    assert_eq!(oneshot(&layer, build("/h", "one")).await, 200);
    assert_eq!(oneshot(&layer, build("/h", "one")).await, 429);
    assert_eq!(oneshot(&layer, build("/h", "two")).await, 200);
    assert_eq!(oneshot(&layer, build("/c", "one")).await, 200);
    assert_eq!(oneshot(&layer, build("/c", "one")).await, 429);
    assert_eq!(oneshot(&layer, build("/c", "two")).await, 200);

    // More cookie lines than the bounds hold: refused whole (431).
    let mut flood = build("/c", "three");
    for i in 0..5_000 {
        let line = HeaderValue::from_str(&format!("c{i}=v")).unwrap();
        flood.headers_mut().append("cookie", line);
    }
    assert_eq!(oneshot(&layer, flood).await, 431);

    let query = |first: &str, n: usize| {
        let mut q = format!("/q?a={first}");
        for i in 0..n {
            q.push_str(&format!("&a={i}&b=%zz"));
        }
        q
    };
    // Close to the 64 KiB an `http::Uri` can hold: refused whole (414).
    let long = from_client(&query("x", 4_000))
        .body(Full::default())
        .unwrap();
    assert_eq!(oneshot(&layer, long).await, 414);
    let query = |first: &str| query(first, 1_000);
    assert_eq!(
        oneshot(
            &layer,
            from_client(&query("x")).body(Full::default()).unwrap()
        )
        .await,
        200
    );
    assert_eq!(
        oneshot(
            &layer,
            from_client(&query("x")).body(Full::default()).unwrap()
        )
        .await,
        429
    );
    assert_eq!(
        oneshot(
            &layer,
            from_client(&query("y")).body(Full::default()).unwrap()
        )
        .await,
        200
    );
}

#[tokio::test]
async fn many_repeats_and_a_long_query_over_tcp() {
    let clock = clock();
    let addr = serve_axum(app(layer(KEYED, &clock))).await;
    let mut q = String::from("/q?a=first");
    // Within the 16 KiB the rules read (longer: 414).
    for i in 0..2_000 {
        q.push_str(&format!("&a={i}"));
    }
    let mut b = request("GET", &q);
    // hyper answers 431 past 100 header lines.
    for i in 0..45 {
        b = b
            .header("cookie", format!("k{i}=v"))
            .header("x-tenant", format!("t{i}"));
    }
    let r = send(addr, b.body(Full::default()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert_eq!(hit(addr, "/q?a=first&a=other").await.status, 429);
}

#[tokio::test]
async fn odd_paths_are_answered_and_the_server_survives() {
    let clock = clock();
    let addr = serve_axum(app(layer(KEYED, &clock))).await;
    for path in ["/p/%ff%fe", "/p/%", "/p/a/../../..//b", "/p/%2e%2e/%00"] {
        assert_eq!(hit(addr, path).await.status, 200, "{path}");
    }
    // Raw bytes that are not UTF-8 in the request line and a header.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /p/\xff\xfe HTTP/1.1\r\nhost: x\r\nx-tenant: \xff\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 1024];
    let n = stream.read(&mut buf).await.unwrap();
    let head = String::from_utf8_lossy(&buf[..n]);
    assert!(head.starts_with("HTTP/1.1 "), "{head}");
    assert_eq!(hit(addr, "/p/still-up").await.status, 200);
}

#[tokio::test]
async fn requests_without_any_peer_address_are_still_answered() {
    let clock = clock();
    // Without the opt-in such requests get 500 (tests/missing_peer.rs).
    let layer = layer(KEYED, &clock).shared_bucket_without_peer();
    let req = |t: &str| {
        Request::builder()
            .uri("/h")
            .header("x-tenant", t)
            .body(Full::default())
            .unwrap()
    };
    assert_eq!(oneshot(&layer, req("a")).await, 200);
    assert_eq!(oneshot(&layer, req("a")).await, 429);
}
