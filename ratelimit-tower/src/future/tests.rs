use super::*;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{ClientIp, Limiter, ManualClock};
use std::convert::Infallible;
use tower::{Layer, Service};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// An inner service whose future holds nothing.
type Handler = tower::util::ServiceFn<
    fn(Request<()>) -> std::future::Pending<Result<Response<axum::body::Body>, Infallible>>,
>;

#[test]
fn the_future_holds_no_request_and_no_response() {
    // The request (224 bytes), a refusal's verdict and the layer's own
    // answers are not kept inline: the future stays within what a move
    // copies without calling `memcpy` (128 bytes on x86-64), and a
    // forwarded request keeps less than its verdict.
    let future = std::mem::size_of::<ResponseFuture<Handler, (), crate::JsonResponse>>();
    assert!(future <= 128, "{future} bytes, more than 128");
    assert!(std::mem::size_of::<After>() < std::mem::size_of::<Verdict>());
}

/// A subscriber taking spans and events up to `max`, writing nothing.
struct UpTo(LevelFilter);

impl Subscriber for UpTo {
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        self.0 >= *meta.level()
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.0)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Whether the future of one allowed request holds a span, with a
/// subscriber taking up to `max` as the default.
fn holds_a_span(max: LevelFilter) -> bool {
    let rules = r#"[{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
        "limit": 10, "burst": 10, "period": "1s", "key": ["ip"]}]"#;
    let limiter = Limiter::builder(RuleSet::from_json(rules).expect("rules"))
        .clock(ManualClock::new(1_767_225_600_000))
        .build();
    let handler: Handler = tower::service_fn(|_req| std::future::pending());
    let mut svc = crate::RateLimitLayer::new(limiter).layer(handler);
    let req = Request::builder()
        .extension(ClientIp([203, 0, 113, 7].into()))
        .body(())
        .expect("request");
    tracing::subscriber::with_default(UpTo(max), || svc.call(req).span.0.is_some())
}

#[test]
fn a_subscriber_that_takes_no_debug_gets_no_span_made() {
    // The span would be disabled: nothing is boxed, entered or dropped.
    assert!(!holds_a_span(LevelFilter::INFO));
    // Taken at debug level, it is kept (its outcome is recorded on it).
    assert!(holds_a_span(LevelFilter::DEBUG));
}

/// An inner service answering at once; its future panics when polled
/// again after it answered.
type Ready = tower::util::ServiceFn<
    fn(Request<()>) -> std::future::Ready<Result<Response<axum::body::Body>, Infallible>>,
>;

#[test]
fn a_future_polled_after_it_answered_is_pending_and_leaves_the_inner_one_alone() {
    // The forwarded state stays until the future is dropped: polling again
    // must not reach the inner future (`Ready` would panic).
    let rules = r#"[{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
        "limit": 10, "burst": 10, "period": "1s", "key": ["ip"], "ratelimit_headers": true}]"#;
    let limiter = Limiter::builder(RuleSet::from_json(rules).expect("rules"))
        .clock(ManualClock::new(1_767_225_600_000))
        .build();
    let handler: Ready =
        tower::service_fn(|_req| std::future::ready(Ok(Response::new(Default::default()))));
    let mut svc = crate::RateLimitLayer::new(limiter).layer(handler);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for headers in [true, false] {
        let req = Request::builder()
            .extension(ClientIp([203, 0, 113, 7].into()))
            .body(())
            .expect("request");
        let mut future = Box::pin(svc.call(req));
        let Poll::Ready(Ok(res)) = future.as_mut().poll(&mut cx) else {
            panic!("forwarded at once");
        };
        assert_eq!(res.headers().contains_key("ratelimit"), headers);
        assert!(future.as_mut().poll(&mut cx).is_pending());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        // Without headers: a rule that sends none.
        let rules = r#"[{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
            "limit": 10, "burst": 10, "period": "1s", "key": ["ip"]}]"#;
        svc.limiter()
            .publish(RuleSet::from_json(rules).expect("rules"));
    }
}
