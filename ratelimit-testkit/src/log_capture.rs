//! A `tracing` subscriber that keeps every event as one line of text, for
//! tests that assert what a crate logs.
//!
//! Each event becomes `LEVEL target: name=value ...`, every field written
//! with `Debug` (the message as `message=...`). [`LogCapture::install`]
//! makes it the current thread's subscriber until its guard drops, so a
//! test on tokio's current-thread runtime sees its own backend's tasks and
//! nobody else's.
//!
//! # Example
//!
//! ```
//! use ratelimit_testkit::log_capture::LogCapture;
//! use tracing::Level;
//!
//! let (capture, _guard) = LogCapture::install();
//! tracing::warn!(node = "127.0.0.1:6379", "valkey connection lost");
//! let lost = capture.with("connection lost");
//! assert_eq!(lost.len(), 1);
//! assert!(lost[0].starts_with("WARN ") && lost[0].contains("node=\"127.0.0.1:6379\""));
//! assert_eq!(capture.at(Level::WARN, module_path!()), lost);
//! assert!(capture.with_at_least(Level::ERROR, "lost").is_empty());
//! ```

use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard};

use tracing::dispatcher::DefaultGuard;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

/// One captured event.
#[derive(Debug)]
struct Entry {
    level: Level,
    target: String,
    line: String,
}

/// The events logged so far, one line each; a cheap-to-clone handle.
#[derive(Clone, Debug, Default)]
pub struct LogCapture(Arc<Mutex<Vec<Entry>>>);

impl LogCapture {
    /// A new capture, made the current thread's default subscriber until
    /// the returned guard drops.
    #[must_use]
    pub fn install() -> (Self, DefaultGuard) {
        let capture = Self::default();
        let guard = tracing::dispatcher::set_default(&Dispatch::new(capture.clone()));
        (capture, guard)
    }

    /// Every line so far, in the order logged.
    pub fn lines(&self) -> Vec<String> {
        self.entries().iter().map(|e| e.line.clone()).collect()
    }

    /// The lines that contain `text`, at any level.
    pub fn with(&self, text: &str) -> Vec<String> {
        self.matching(|e| e.line.contains(text))
    }

    /// The lines that contain `text` at `level` or a more severe one
    /// (`INFO` keeps `INFO`, `WARN` and `ERROR`).
    pub fn with_at_least(&self, level: Level, text: &str) -> Vec<String> {
        // tracing orders levels by verbosity: ERROR < WARN < ... < TRACE.
        self.matching(|e| e.level <= level && e.line.contains(text))
    }

    /// The lines at exactly `level` whose target is `target` or one of its
    /// submodules (`ratelimit_admin` keeps `ratelimit_admin::routes`).
    pub fn at(&self, level: Level, target: &str) -> Vec<String> {
        let sub = format!("{target}::");
        self.matching(|e| e.level == level && (e.target == target || e.target.starts_with(&sub)))
    }

    fn matching(&self, keep: impl Fn(&Entry) -> bool) -> Vec<String> {
        let entries = self.entries();
        entries
            .iter()
            .filter(|e| keep(e))
            .map(|e| e.line.clone())
            .collect()
    }

    fn entries(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A test that panicked while logging leaves the lines readable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Appends ` name=value` for every field of an event.
struct Line<'a>(&'a mut String);

impl Visit for Line<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
}

impl Subscriber for LogCapture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        let meta = e.metadata();
        let mut line = format!("{} {}:", meta.level(), meta.target());
        e.record(&mut Line(&mut line));
        self.entries().push(Entry {
            level: *meta.level(),
            target: meta.target().to_owned(),
            line,
        });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
