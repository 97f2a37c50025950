//! A request with no client address is answered 500 naming the fix, never
//! keyed into one bucket shared by every such client, unless the layer
//! asks for that bucket.

mod support;

use std::net::SocketAddr;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use ratelimit_tower::{ClientIp, RateLimitLayer};
use support::*;
use tokio::net::TcpListener;
use tower::{service_fn, ServiceBuilder, ServiceExt};

const BY_IP: &str = r#"[{"id": "per-ip", "expression": "true", "algorithm": "fixed_window",
    "limit": 1, "period": "1m", "key": ["ip"]}]"#;

async fn call(layer: &RateLimitLayer, req: Request<Full<Bytes>>) -> (u16, String) {
    let svc = ServiceBuilder::new()
        .layer(layer.clone())
        .service(service_fn(hello));
    let res = svc.oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn bare() -> Request<Full<Bytes>> {
    Request::new(Full::default())
}

#[tokio::test]
async fn a_request_without_a_peer_address_gets_500_naming_the_fix() {
    let layer = layer(BY_IP, &clock());
    for _ in 0..2 {
        let (status, body) = call(&layer, bare()).await;
        assert_eq!(status, 500);
        assert!(
            body.contains("into_make_service_with_connect_info::<SocketAddr>()"),
            "{body}"
        );
        assert!(body.contains("SetClientIpLayer"), "{body}");
        assert!(body.contains("shared_bucket_without_peer()"), "{body}");
    }
}

#[tokio::test]
async fn the_misconfiguration_is_logged_at_error_once_per_layer() {
    let (logs, _guard) = ratelimit_testkit::log_capture::LogCapture::install();
    let layer = layer(BY_IP, &clock());
    for _ in 0..3 {
        assert_eq!(call(&layer, bare()).await.0, 500);
    }
    let errors = logs.with_at_least(tracing::Level::ERROR, "no client address");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].contains("`tonic` feature"), "{}", errors[0]);
    // Another layer (another server) says it again.
    let other = layer_of(BY_IP);
    assert_eq!(call(&other, bare()).await.0, 500);
    assert_eq!(logs.with("no client address").len(), 2);
}

fn layer_of(json: &str) -> RateLimitLayer {
    layer(json, &clock())
}

#[tokio::test]
async fn axum_served_without_connect_info_gets_500_not_a_shared_bucket() {
    let app = Router::new()
        .route("/", get(ok))
        .layer(layer(BY_IP, &clock()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    // The mistake: no `into_make_service_with_connect_info`.
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let reply = hit(addr, "/").await;
    assert_eq!(reply.status, 500);
    assert!(reply.body.contains("into_make_service_with_connect_info"));
}

#[tokio::test]
async fn the_opt_in_limits_every_such_request_as_one_bucket() {
    let layer = layer(BY_IP, &clock()).shared_bucket_without_peer();
    assert_eq!(call(&layer, bare()).await.0, 200);
    // Another client, also without an address: the same bucket.
    assert_eq!(call(&layer, bare()).await.0, 429);
    // A client with an address has its own.
    let mut req = bare();
    req.extensions_mut()
        .insert(ClientIp("192.0.2.1".parse().unwrap()));
    assert_eq!(call(&layer, req).await.0, 200);
}

#[tokio::test]
async fn each_peer_source_is_enough() {
    let layer = layer(BY_IP, &clock());
    let peer: SocketAddr = "192.0.2.7:50000".parse().unwrap();
    let mut with_client_ip = bare();
    with_client_ip
        .extensions_mut()
        .insert(ClientIp("192.0.2.5".parse().unwrap()));
    assert_eq!(call(&layer, with_client_ip).await.0, 200);
    let mut with_socket_addr = bare();
    with_socket_addr.extensions_mut().insert(peer);
    assert_eq!(call(&layer, with_socket_addr).await.0, 200);
    let mut with_connect_info = bare();
    with_connect_info
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(
            "192.0.2.9:1".parse::<SocketAddr>().unwrap(),
        ));
    assert_eq!(call(&layer, with_connect_info).await.0, 200);
}
