//! Every change is logged at info with what changed; refusals at warn.

mod support;

use std::sync::{Arc, Mutex};

use ratelimit_admin::Admin;
use support::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Keeps `LEVEL target: field=value ...` of every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Line<'a>(&'a mut String);

impl Visit for Line<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut line = format!("{} {}:", e.metadata().level(), e.metadata().target());
        e.record(&mut Line(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Capture {
    fn lines(&self, level: Level) -> Vec<String> {
        let prefix = format!("{level} ratelimit_admin:");
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(&prefix))
            .cloned()
            .collect()
    }
}

#[tokio::test]
async fn changes_are_logged_at_info_with_what_changed() {
    let capture = Capture::default();
    let _guard = tracing::dispatcher::set_default(&tracing::Dispatch::new(capture.clone()));
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let subject = l
        .subject_of("login", &req("203.0.113.7", "/login"))
        .unwrap()
        .to_hex();
    let app = Admin::new(l).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    assert!(
        capture.lines(Level::INFO).is_empty(),
        "a page load changes nothing"
    );

    let form = format!("csrf={token}&switch=disable_jwt&on=true");
    send(&app, post("/switch", Some(&cookie), &form)).await;
    let form = format!("csrf={token}&rule=login&subject={subject}");
    send(&app, post("/reset", Some(&cookie), &form)).await;
    let info = capture.lines(Level::INFO);
    assert_eq!(info.len(), 2, "{info:?}");
    assert!(
        info[0].contains("switch=\"disable_jwt\" from=false to=true"),
        "{}",
        info[0]
    );
    assert!(
        info[1].contains("rule=\"login\"") && info[1].contains(&subject),
        "{}",
        info[1]
    );

    send(
        &app,
        post("/switch", Some(&cookie), "switch=disable_jwt&on=false"),
    )
    .await;
    assert_eq!(
        capture.lines(Level::INFO).len(),
        2,
        "a refusal changes nothing"
    );
    let warn = capture.lines(Level::WARN);
    assert!(warn.iter().any(|l| l.contains("CSRF")), "{warn:?}");
}
