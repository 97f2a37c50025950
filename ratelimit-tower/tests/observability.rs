//! The `ratelimit` span records the outcome; rule events carry the rule id,
//! the subject's digest and the decision, never the raw key.

mod support;

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use ratelimit_tower::{ClientIp, LoadError, RateLimitLayer};
use support::*;
use tower::{service_fn, ServiceBuilder, ServiceExt};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Collects every span and event field as `name=value` lines.
#[derive(Clone, Default)]
struct Collect {
    lines: Arc<Mutex<Vec<String>>>,
    ids: Arc<AtomicU64>,
}

struct Fields(Vec<String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push(format!("{}={:?}", field.name(), value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push(format!("{}={}", field.name(), value));
    }
}

impl Collect {
    fn push(&self, what: &str, f: Fields) {
        self.lines
            .lock()
            .unwrap()
            .push(format!("{what}: {}", f.0.join(" ")));
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut f = Fields(Vec::new());
        span.record(&mut f);
        self.push(span.metadata().name(), f);
        Id::from_u64(self.ids.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut f = Fields(Vec::new());
        values.record(&mut f);
        self.push("record", f);
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut f = Fields(Vec::new());
        event.record(&mut f);
        self.push(&format!("event {}", event.metadata().level()), f);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[test]
fn spans_and_events_name_the_rule_and_hide_the_key() {
    let json = r#"[{"id": "tenant", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip", "header:x-tenant"]}]"#;
    let collect = Collect::default();
    tracing::subscriber::with_default(collect.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let clock = clock();
            let svc = ServiceBuilder::new()
                .layer(layer(json, &clock))
                .service(service_fn(hello));
            for _ in 0..2 {
                let req = Request::builder()
                    .uri("/secret-path")
                    .header("x-tenant", "raw-tenant-key")
                    .extension(ClientIp("192.0.2.1".parse().unwrap()))
                    .body(Full::<Bytes>::default())
                    .unwrap();
                svc.clone().oneshot(req).await.unwrap();
            }
        });
    });
    let lines = collect.lines.lock().unwrap().join("\n");
    assert!(
        lines.contains("ratelimit: method=GET path=/secret-path"),
        "{lines}"
    );
    assert!(lines.contains("record: outcome=forward"), "{lines}");
    assert!(lines.contains("record: outcome=limited"), "{lines}");
    assert!(lines.contains("rule=tenant"), "{lines}");
    assert!(lines.contains("decision=allowed"), "{lines}");
    assert!(lines.contains("decision=limited"), "{lines}");
    assert!(lines.contains("remaining=0"), "{lines}");
    let subject = lines
        .split_whitespace()
        .find_map(|w| w.strip_prefix("subject="))
        .unwrap();
    assert_eq!(subject.len(), 32, "a 128-bit digest in hex: {subject}");
    assert!(!lines.contains("raw-tenant-key"), "{lines}");
}

/// A rule file's warnings are logged at `warn` when the layer loads it,
/// naming the file, the rule and the field, on either constructor.
#[test]
fn loading_a_rule_file_logs_its_warnings() {
    let dir = std::env::temp_dir().join(format!("ratelimit-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rules.json");
    let json = r#"[{"id": "per-user", "expression": "true", "algorithm": "sliding_window",
        "limit": 100, "period": "1m", "key": ["ip", "app:user"], "on_missing_key": "skip"}]"#;
    std::fs::write(&path, json).unwrap();
    let collect = Collect::default();
    tracing::subscriber::with_default(collect.clone(), || {
        let _memory = RateLimitLayer::from_json_file(&path).unwrap();
        let backend = ratelimit_core::backend::MemoryBackend::default();
        let _other = RateLimitLayer::from_json_file_with_backend(&path, backend).unwrap();
    });
    std::fs::remove_dir_all(&dir).unwrap();
    let lines = collect.lines.lock().unwrap().clone();
    let warned: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("event WARN:"))
        .collect();
    assert_eq!(warned.len(), 2, "one per load: {lines:?}");
    for line in warned {
        assert!(line.contains(&format!("file={}", path.display())), "{line}");
        assert!(line.contains("rule=per-user"), "{line}");
        assert!(line.contains("field=on_missing_key"), "{line}");
        assert!(
            line.contains("skip lets a client bypass the rule"),
            "{line}"
        );
    }
}

/// A missing file is an I/O error naming it; an invalid rule names the
/// rule and the field.
#[test]
fn a_rule_file_that_cannot_load_says_why() {
    let err = RateLimitLayer::from_json_file("no/such/rules.json").unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }), "{err}");
    assert!(err.to_string().contains("no/such/rules.json"), "{err}");
    let dir = std::env::temp_dir().join(format!("ratelimit-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rules.json");
    std::fs::write(
        &path,
        r#"[{"id": "x", "expression": "true", "algorithm": "fixed_window",
        "limit": 0, "period": "1m", "key": ["ip"]}]"#,
    )
    .unwrap();
    let backend = ratelimit_core::backend::MemoryBackend::default();
    let err = RateLimitLayer::from_json_file_with_backend(&path, backend).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    let LoadError::Rules(e) = err else {
        panic!("not a rule error: {err}");
    };
    assert_eq!((e.rule(), e.field()), (Some("x"), Some("limit")));
}
