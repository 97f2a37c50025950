//! LimitConnLayer: a request counts from its head until its body is done or
//! dropped; the count is given back exactly once, whatever ends the request.

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use ratelimit_core::ClientIp;
use ratelimit_nginx::LimitConnLayer;
use ratelimit_nginx::{
    Level, LimitConnStatus, LimitConnZone, LimitRejected, NginxConfig, ZoneRegistry,
};
use tower::{service_fn, Layer, Service, ServiceExt};

const IP: &str = "192.0.2.1";

fn layer(level: &str) -> (LimitConnLayer, Arc<LimitConnZone>) {
    let config = NginxConfig::parse("limit_conn_zone $client_ip zone=addr:1m;").expect("config");
    let zones = ZoneRegistry::new().load(&config).expect("zones");
    let policy = zones
        .limit_conn(&Level::parse(level).expect("level"))
        .expect("policy");
    let zone = zones.conn_zone("addr").cloned().expect("zone");
    (LimitConnLayer::new(policy), zone)
}

fn from(ip: &str) -> Request<()> {
    let mut req = Request::new(());
    req.extensions_mut()
        .insert(ClientIp(ip.parse().expect("ip")));
    req
}

fn in_progress(zone: &LimitConnZone) -> u32 {
    zone.in_progress(IP.as_bytes())
}

type Answer = Result<Response<Full<Bytes>>, Infallible>;

/// A service whose responses are `Full` bodies, built by `make`.
fn app<F, Fut>(
    make: F,
) -> impl Service<Request<()>, Response = Response<Full<Bytes>>, Error = Infallible> + Clone
where
    F: Fn() -> Fut + Clone,
    Fut: Future<Output = Answer>,
{
    service_fn(move |_req: Request<()>| make())
}

async fn ok() -> Answer {
    Ok(Response::new(Full::new(Bytes::from_static(b"file"))))
}

#[tokio::test]
async fn the_count_lasts_until_the_response_body_is_done() {
    let (layer, zone) = layer("limit_conn addr 1;");
    let svc = layer.layer(app(ok));
    let mut res = svc.clone().oneshot(from(IP)).await.expect("infallible");
    assert_eq!(
        res.extensions().get::<LimitConnStatus>(),
        Some(&LimitConnStatus::Passed)
    );
    assert_eq!(in_progress(&zone), 1, "counted while the body is unread");
    let refused = svc.clone().oneshot(from(IP)).await.expect("infallible");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        refused.extensions().get::<LimitConnStatus>(),
        Some(&LimitConnStatus::Rejected)
    );
    assert!(refused.extensions().get::<LimitRejected>().is_some());
    while let Some(frame) = res.body_mut().frame().await {
        frame.expect("frame");
    }
    assert!(!res.body().holds_permit());
    assert_eq!(
        in_progress(&zone),
        0,
        "given back at the end of the body, before it is dropped"
    );
    drop(res);
    assert_eq!(zone.len(), 0);
}

#[tokio::test]
async fn a_client_that_drops_the_response_body_gives_the_count_back() {
    let (layer, zone) = layer("limit_conn addr 2;");
    let svc = layer.layer(app(ok));
    let a = svc.clone().oneshot(from(IP)).await.expect("infallible");
    let b = svc.clone().oneshot(from(IP)).await.expect("infallible");
    assert_eq!(in_progress(&zone), 2);
    drop(a);
    assert_eq!(in_progress(&zone), 1);
    drop(b.into_body());
    assert_eq!(in_progress(&zone), 0);
}

#[tokio::test(start_paused = true)]
async fn a_client_that_drops_the_response_future_gives_the_count_back() {
    let (layer, zone) = layer("limit_conn addr 1;");
    let slow = || async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        ok().await
    };
    let mut svc = layer.layer(app(slow));
    let future = svc.ready().await.expect("ready").call(from(IP));
    assert_eq!(
        in_progress(&zone),
        1,
        "counted from the moment the head is read"
    );
    let abandoned = tokio::time::timeout(Duration::from_secs(1), future).await;
    assert!(abandoned.is_err());
    assert_eq!(
        in_progress(&zone),
        0,
        "the dropped future gave the count back"
    );
}

#[tokio::test]
async fn a_failing_service_gives_the_count_back() {
    let (layer, zone) = layer("limit_conn addr 1;");
    let failing = service_fn(|_req: Request<()>| async {
        Err::<Response<Full<Bytes>>, &str>("backend down")
    });
    let svc = layer.layer(failing);
    assert!(svc.clone().oneshot(from(IP)).await.is_err());
    assert_eq!(in_progress(&zone), 0);
}

#[tokio::test]
async fn a_refused_request_is_not_counted_and_never_forwarded() {
    let (layer, zone) = layer("limit_conn addr 1; limit_conn_status 429;");
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let svc = layer.layer(service_fn(move |_req: Request<()>| {
        counted.fetch_add(1, Ordering::SeqCst);
        ok()
    }));
    let held = svc.clone().oneshot(from(IP)).await.expect("infallible");
    for _ in 0..3 {
        let res = svc.clone().oneshot(from(IP)).await.expect("infallible");
        assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    assert_eq!((calls.load(Ordering::SeqCst), in_progress(&zone)), (1, 1));
    drop(held);
    assert_eq!(
        svc.clone()
            .oneshot(from(IP))
            .await
            .expect("infallible")
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn the_inner_service_sees_limit_conn_status_and_a_dry_run_refuses_nothing() {
    let (layer, zone) = layer("limit_conn addr 1; limit_conn_dry_run on;");
    let svc = layer.layer(service_fn(|req: Request<()>| {
        let seen = req
            .extensions()
            .get::<LimitConnStatus>()
            .map(|s| s.as_str())
            .unwrap_or("-");
        let body = Full::new(Bytes::from(seen));
        async move { Ok::<_, Infallible>(Response::new(body)) }
    }));
    let first = svc.clone().oneshot(from(IP)).await.expect("infallible");
    let second = svc.clone().oneshot(from(IP)).await.expect("infallible");
    assert_eq!(second.status(), StatusCode::OK);
    let body = second.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(body, "REJECTED_DRY_RUN");
    assert_eq!(
        in_progress(&zone),
        1,
        "the would-be refused request is not counted"
    );
    drop(first);
    assert_eq!(in_progress(&zone), 0);
}
