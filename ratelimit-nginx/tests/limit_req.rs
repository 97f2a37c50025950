//! LimitReqLayer under Tokio's paused time: delays at the rate, without
//! blocking others, inside the response future; statuses as extensions.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ratelimit_core::ClientIp;
use ratelimit_core::TokioClock;
use ratelimit_nginx::LimitReqLayer;
use ratelimit_nginx::{Level, LimitKind, LimitRejected, LimitReqStatus, NginxConfig, ZoneRegistry};
use tokio::time::Instant;
use tower::{service_fn, Layer, Service, ServiceExt};

const ZONES: &str = "limit_req_zone $client_ip zone=one:1m rate=2r/s;";

fn layer(level: &str) -> LimitReqLayer {
    let config = NginxConfig::parse(ZONES).expect("config");
    let zones = ZoneRegistry::new().load(&config).expect("zones");
    let policy = zones
        .limit_req(&Level::parse(level).expect("level"))
        .expect("policy");
    LimitReqLayer::new_with_clock(policy, TokioClock::new())
}

fn from(ip: &str) -> Request<()> {
    let mut req = Request::new(());
    req.extensions_mut()
        .insert(ClientIp(ip.parse().expect("ip")));
    req
}

/// An inner service that counts its calls and echoes `$limit_req_status`.
fn app(
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send>
       + Clone
       + Send {
    service_fn(move |req: Request<()>| {
        calls.fetch_add(1, Ordering::SeqCst);
        let seen = req
            .extensions()
            .get::<LimitReqStatus>()
            .map(|s| s.as_str())
            .unwrap_or("-");
        let body = seen.to_owned();
        async move { Ok::<_, Infallible>(Response::new(body)) }
    })
}

#[tokio::test(start_paused = true)]
async fn delayed_requests_are_released_at_the_rate() {
    let calls = Arc::new(AtomicUsize::new(0));
    let svc = layer("limit_req zone=one burst=4;").layer(app(calls.clone()));
    let start = Instant::now();
    let mut waiting = Vec::new();
    for _ in 0..5 {
        let mut svc = svc.clone();
        let future = svc.ready().await.expect("ready").call(from("192.0.2.1"));
        waiting.push(tokio::spawn(async move {
            let res = future.await.expect("infallible");
            (start.elapsed().as_millis(), res.into_body())
        }));
    }
    let mut released = Vec::new();
    for w in waiting {
        released.push(w.await.expect("join"));
    }
    let times: Vec<u128> = released.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        [0, 500, 1000, 1500, 2000],
        "2r/s releases one every 500 ms"
    );
    let seen: Vec<&str> = released.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(seen, ["PASSED", "DELAYED", "DELAYED", "DELAYED", "DELAYED"]);
    assert_eq!(calls.load(Ordering::SeqCst), 5);
}

#[tokio::test(start_paused = true)]
async fn a_waiting_request_does_not_block_other_requests() {
    let calls = Arc::new(AtomicUsize::new(0));
    let svc = layer("limit_req zone=one burst=4;").layer(app(calls.clone()));
    let start = Instant::now();
    let _ = svc.clone().oneshot(from("192.0.2.1")).await;
    let slow = tokio::spawn(svc.clone().oneshot(from("192.0.2.1")));
    tokio::task::yield_now().await;
    let other = svc
        .clone()
        .oneshot(from("192.0.2.2"))
        .await
        .expect("infallible");
    assert_eq!(
        (other.status(), start.elapsed()),
        (StatusCode::OK, Duration::ZERO)
    );
    let slow = slow.await.expect("join").expect("infallible");
    assert_eq!(
        (slow.status(), start.elapsed()),
        (StatusCode::OK, Duration::from_millis(500))
    );
}

#[tokio::test(start_paused = true)]
async fn the_wait_counts_against_the_clients_timeout() {
    let calls = Arc::new(AtomicUsize::new(0));
    let svc = layer("limit_req zone=one burst=4;").layer(app(calls.clone()));
    let _ = svc.clone().oneshot(from("192.0.2.1")).await;
    let timed_out = tokio::time::timeout(
        Duration::from_millis(300),
        svc.clone().oneshot(from("192.0.2.1")),
    )
    .await;
    assert!(
        timed_out.is_err(),
        "a 500 ms wait fits in no 300 ms timeout"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the abandoned request never reached the service"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_request_gets_its_status_and_never_reaches_the_service() {
    let calls = Arc::new(AtomicUsize::new(0));
    let svc = layer("limit_req zone=one burst=1 nodelay; limit_req_status 429;")
        .layer(app(calls.clone()));
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let res = svc
            .clone()
            .oneshot(from("192.0.2.1"))
            .await
            .expect("infallible");
        statuses.push(res.status());
        last = Some(res);
    }
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let refused = last.expect("response");
    assert_eq!(
        refused.extensions().get::<LimitReqStatus>(),
        Some(&LimitReqStatus::Rejected)
    );
    let why = refused.extensions().get::<LimitRejected>().expect("reason");
    assert_eq!(
        (why.kind(), why.zone(), why.zone_exhausted()),
        (LimitKind::Req, "one", false)
    );
    assert!(refused.body().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_response_carries_limit_req_status() {
    let svc = layer("limit_req zone=one burst=1;").layer(app(Arc::default()));
    let first = svc
        .clone()
        .oneshot(from("192.0.2.1"))
        .await
        .expect("infallible");
    let second = svc
        .clone()
        .oneshot(from("192.0.2.1"))
        .await
        .expect("infallible");
    assert_eq!(
        first.extensions().get::<LimitReqStatus>(),
        Some(&LimitReqStatus::Passed)
    );
    assert_eq!(
        second.extensions().get::<LimitReqStatus>(),
        Some(&LimitReqStatus::Delayed)
    );
    let unlimited = svc
        .clone()
        .oneshot(Request::new(()))
        .await
        .expect("infallible");
    assert_eq!(
        unlimited.extensions().get::<LimitReqStatus>(),
        None,
        "no key, no status"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_or_shadow_layer_forwards_everything_without_waiting() {
    for (level, shadow) in [
        ("limit_req zone=one; limit_req_dry_run on;", false),
        ("limit_req zone=one;", true),
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let svc = layer(level).with_shadow(shadow).layer(app(calls.clone()));
        let start = Instant::now();
        let mut seen = Vec::new();
        for _ in 0..3 {
            let res = svc
                .clone()
                .oneshot(from("192.0.2.1"))
                .await
                .expect("infallible");
            seen.push((res.status(), res.into_body()));
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "{level}");
        assert_eq!(calls.load(Ordering::SeqCst), 3, "{level}");
        assert_eq!(
            seen[2],
            (StatusCode::OK, "REJECTED_DRY_RUN".to_owned()),
            "{level}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn stacked_layers_report_the_worst_status() {
    let config = NginxConfig::parse("limit_req_zone $client_ip zone=a:1m rate=1r/s; limit_req_zone $client_ip zone=b:1m rate=1r/s;")
        .expect("config");
    let zones = ZoneRegistry::new().load(&config).expect("zones");
    let policy = |l: &str| {
        zones
            .limit_req(&Level::parse(l).expect("level"))
            .expect("policy")
    };
    let inner = LimitReqLayer::new_with_clock(
        policy("limit_req zone=b burst=5 nodelay;"),
        TokioClock::new(),
    );
    let outer =
        LimitReqLayer::new_with_clock(policy("limit_req zone=a burst=5;"), TokioClock::new());
    let svc = outer.layer(inner.layer(app(Arc::default())));
    let _ = svc.clone().oneshot(from("192.0.2.1")).await;
    let res = svc
        .clone()
        .oneshot(from("192.0.2.1"))
        .await
        .expect("infallible");
    assert_eq!(
        res.extensions().get::<LimitReqStatus>(),
        Some(&LimitReqStatus::Delayed)
    );
    assert_eq!(
        res.body(),
        "DELAYED",
        "the inner layer passed, the outer one delayed"
    );
}
