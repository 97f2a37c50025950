//! The layer's span carries the OpenTelemetry attributes `ratelimit.key`
//! (the deciding rule's subject digest, never the raw key),
//! `ratelimit.allowed`, `ratelimit.remaining` and `ratelimit.rule`, read
//! back through `tracing-opentelemetry` and the SDK's in-memory exporter.
//!
//! Its own test binary: it sets the global `tracing` dispatcher.

mod support;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use ratelimit_core::backend::{subject, KeyOutcome};
use ratelimit_core::{HashKey, Limiter, RequestAttrs};
use ratelimit_tower::{ClientIp, RateLimitLayer};
use support::*;
use tower::{service_fn, Service, ServiceBuilder, ServiceExt};
use tracing_subscriber::layer::SubscriberExt;

const RULES: &str = r#"[
  {"id": "site", "expression": "true", "algorithm": "fixed_window", "limit": 10,
   "period": "1m", "key": ["ip"]},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
   "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip", "header:x-user"]}
]"#;

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

#[tokio::test]
async fn the_span_carries_the_deciding_rule() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("ratelimit-test"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(otel)).unwrap();

    let limiter = Limiter::builder(rules(RULES))
        .clock(clock())
        .hash_key(HashKey::DEFAULT)
        .build();
    let mut svc = ServiceBuilder::new()
        .layer(RateLimitLayer::new(limiter.clone()))
        .service(service_fn(hello));
    for _ in 0..3 {
        let req = Request::builder()
            .uri("/login")
            .header("x-user", "ann")
            .extension(ClientIp("192.0.2.1".parse().unwrap()))
            .body(Full::<Bytes>::default())
            .unwrap();
        svc.ready().await.unwrap().call(req).await.unwrap();
    }
    provider.force_flush().unwrap();
    let spans: Vec<SpanData> = exporter
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.name == "ratelimit")
        .collect();
    assert_eq!(spans.len(), 3);

    let login = limiter.rules().get("login").unwrap().clone();
    let req = RequestAttrs::new("192.0.2.1".parse().unwrap()).with_header("x-user", "ann");
    let KeyOutcome::Subject(digest) = subject(&login, &req, &HashKey::DEFAULT, false) else {
        panic!("login keys the request");
    };
    let key = Value::from(digest.to_hex());
    // Allowed, 1 left of login's 2 (site has 9 left): login decides.
    assert_eq!(
        attr(&spans[0], "ratelimit.allowed"),
        Some(&Value::Bool(true))
    );
    assert_eq!(
        attr(&spans[0], "ratelimit.rule"),
        Some(&Value::from("login"))
    );
    assert_eq!(attr(&spans[0], "ratelimit.remaining"), Some(&Value::I64(1)));
    assert_eq!(attr(&spans[0], "ratelimit.key"), Some(&key));
    assert_eq!(attr(&spans[1], "ratelimit.remaining"), Some(&Value::I64(0)));
    // The third is refused by login.
    assert_eq!(
        attr(&spans[2], "ratelimit.allowed"),
        Some(&Value::Bool(false))
    );
    assert_eq!(
        attr(&spans[2], "ratelimit.rule"),
        Some(&Value::from("login"))
    );
    assert_eq!(attr(&spans[2], "ratelimit.key"), Some(&key));
    // Never the raw key.
    for s in &spans {
        assert!(s
            .attributes
            .iter()
            .all(|kv| !kv.value.as_str().contains("ann")));
    }
}
