//! The layer in `tower::ServiceBuilder`, axum's `route_layer`, and a bare
//! hyper 1 server over TCP.

mod support;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use ratelimit_tower::{ClientIp, RateLimit, RateLimitLayer};
use support::*;
use tower::{service_fn, ServiceBuilder, ServiceExt};

const TWO: &str = r#"[{"id": "two", "expression": "true", "algorithm": "fixed_window",
    "limit": 2, "period": "1m", "key": ["ip"], "ratelimit_headers": true}]"#;

fn from(ip: &str) -> Request<Full<Bytes>> {
    let mut req = Request::new(Full::new(Bytes::new()));
    req.extensions_mut().insert(ClientIp(ip.parse().unwrap()));
    req
}

#[tokio::test]
async fn service_builder_wraps_a_plain_tower_service() {
    let clock = clock();
    let svc = ServiceBuilder::new()
        .layer(layer(TWO, &clock))
        .service(service_fn(hello));
    let mut got = Vec::new();
    for _ in 0..3 {
        let res = svc.clone().oneshot(from("192.0.2.1")).await.unwrap();
        got.push(res.status().as_u16());
    }
    assert_eq!(got, [200, 200, 429]);
    // Another client has its own counter.
    let res = svc.clone().oneshot(from("192.0.2.2")).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["ratelimit"], r#""two";r=1;t=60"#);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"hello");
}

#[tokio::test]
async fn the_inner_error_type_is_kept() {
    let clock = clock();
    let failing = service_fn(|_req: Request<Full<Bytes>>| async {
        Err::<Response<Full<Bytes>>, _>(std::io::Error::other("boom"))
    });
    let svc = RateLimit::new(failing, layer(TWO, &clock).limiter().clone());
    let err: std::io::Error = svc.oneshot(from("192.0.2.1")).await.unwrap_err();
    assert_eq!(err.to_string(), "boom");
}

#[tokio::test]
async fn route_layer_limits_only_the_routes_it_wraps() {
    let clock = clock();
    let app = Router::new()
        .route("/limited", get(ok))
        .route_layer(layer(TWO, &clock))
        .route("/free", get(ok));
    let addr = serve_axum(app).await;
    assert_eq!(statuses(addr, "/limited", 3).await, [200, 200, 429]);
    assert_eq!(statuses(addr, "/free", 3).await, [200; 3]);
    // Unmatched paths do not run route layers.
    assert_eq!(statuses(addr, "/nowhere", 1).await, [404]);
}

#[tokio::test]
async fn a_bare_hyper_server_is_limited_over_tcp() {
    let clock = clock();
    let layer: RateLimitLayer = layer(TWO, &clock);
    let svc = ServiceBuilder::new()
        .layer(layer.clone())
        .service(service_fn(hello::<hyper::body::Incoming>));
    let addr = serve_hyper(svc).await;
    let replies = [
        hit(addr, "/").await,
        hit(addr, "/").await,
        hit(addr, "/").await,
    ];
    assert_eq!(replies[0].body, "hello");
    assert_eq!(replies[1].status, 200);
    assert_eq!(replies[2].status, 429);
    assert_eq!(replies[2].header("retry-after"), Some("60"));
    assert_eq!(
        replies[2].body,
        r#"{"error":"rate_limited","retry_after":60}"#
    );
}

#[tokio::test]
async fn axum_handlers_see_the_request_untouched() {
    let clock = clock();
    let app = Router::new()
        .route(
            "/echo",
            axum::routing::post(|body: String| async move { body }),
        )
        .layer(layer(TWO, &clock));
    let addr = serve_axum(app).await;
    let req = request("POST", "/echo")
        .body(Full::new(Bytes::from_static(b"payload")))
        .unwrap();
    let r = send(addr, req).await;
    assert_eq!((r.status.as_u16(), r.body.as_str()), (200, "payload"));
}

/// The types line up for a hyper `service_fn` too.
#[allow(dead_code)]
fn hyper_service_fn_compiles() {
    let clock = clock();
    let svc = ServiceBuilder::new()
        .layer(layer(TWO, &clock))
        .service(service_fn(hello::<hyper::body::Incoming>));
    let _ = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let svc = svc.clone();
        async move { svc.oneshot(req).await }
    });
}
