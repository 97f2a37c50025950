//! Without any `tracing` subscriber, a `log` logger taking debug records
//! still gets the `ratelimit` span's lines (through `tracing`'s `log`
//! feature, which axum's default `tower-log` turns on): the layer skips
//! the span only when nobody listens at all.
//!
//! Its own test binary: no test here may set a `tracing` dispatcher, which
//! would silence `tracing`'s `log` output for the whole process.

mod support;

use std::sync::Mutex;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use ratelimit_tower::ClientIp;
use support::*;
use tower::{service_fn, ServiceBuilder, ServiceExt};

/// Every record as `target: message`.
struct Lines(Mutex<Vec<String>>);

impl log::Log for Lines {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{}: {}", record.target(), record.args());
        self.0.lock().unwrap().push(line);
    }

    fn flush(&self) {}
}

static LINES: Lines = Lines(Mutex::new(Vec::new()));

#[tokio::test]
async fn a_log_logger_alone_still_gets_the_span() {
    log::set_logger(&LINES).unwrap();
    log::set_max_level(log::LevelFilter::Debug);
    let json = r#"[{"id": "site", "expression": "true", "algorithm": "fixed_window",
        "limit": 10, "period": "1m", "key": ["ip"]}]"#;
    let svc = ServiceBuilder::new()
        .layer(layer(json, &clock()))
        .service(service_fn(hello));
    let req = Request::builder()
        .uri("/orders")
        .extension(ClientIp("192.0.2.1".parse().unwrap()))
        .body(Full::<Bytes>::default())
        .unwrap();
    let res = svc.oneshot(req).await.unwrap();
    assert!(res.status().is_success());
    let lines = LINES.0.lock().unwrap().join("\n");
    let span = "ratelimit_tower::service: ratelimit; method=GET path=/orders";
    assert!(lines.contains(span), "{lines}");
    let outcome = r#"ratelimit_tower::service: ratelimit; outcome="forward""#;
    assert!(lines.contains(outcome), "{lines}");
}
