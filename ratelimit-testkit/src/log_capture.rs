//! A `tracing` subscriber that keeps every event, for tests that assert
//! what a crate logs.
//!
//! Each event is kept as a [`Captured`] (its level, target and fields) and
//! as one line of text, `LEVEL target: name=value ...`, every field written
//! with `Debug` (the message as `message=...`). [`LogCapture::install`]
//! makes it the current thread's subscriber until its guard drops, so a
//! test on tokio's current-thread runtime sees its own backend's tasks and
//! nobody else's; [`LogCapture::run`] captures what one closure logs.
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
//!
//! let events = LogCapture::run(|| tracing::info!(excess = %"1.000", "delayed")).events();
//! assert_eq!(events[0].level, Level::INFO);
//! assert_eq!(events[0].field("excess"), Some("1.000"));
//! assert_eq!(events[0].field("message"), Some("delayed"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tracing::dispatcher::DefaultGuard;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::NoSubscriber;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

/// One captured event.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Its level.
    pub level: Level,
    /// Its target (the module that logged it, unless set).
    pub target: String,
    /// Its fields by name, `message` included: strings as they are, other
    /// values with `Debug`.
    pub fields: BTreeMap<String, String>,
    line: String,
}

impl Captured {
    /// The field `name`, if the event has it.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The event as one line: `LEVEL target: name=value ...` (`Debug`).
    pub fn line(&self) -> &str {
        &self.line
    }
}

/// The events logged so far; a cheap-to-clone handle.
#[derive(Clone, Debug, Default)]
pub struct LogCapture(Arc<Mutex<Vec<Captured>>>);

impl LogCapture {
    /// A new capture, made the current thread's default subscriber until
    /// the returned guard drops.
    #[must_use]
    pub fn install() -> (Self, DefaultGuard) {
        always_two_subscribers();
        let capture = Self::default();
        let guard = tracing::dispatcher::set_default(&Dispatch::new(capture.clone()));
        tracing::callsite::rebuild_interest_cache();
        (capture, guard)
    }

    /// Runs `f` with a new capture as the thread's subscriber and returns
    /// the capture, holding what `f` logged.
    pub fn run(f: impl FnOnce()) -> Self {
        always_two_subscribers();
        let capture = Self::default();
        tracing::subscriber::with_default(capture.clone(), || {
            tracing::callsite::rebuild_interest_cache();
            f()
        });
        capture
    }

    /// Every event so far, in the order logged.
    pub fn events(&self) -> Vec<Captured> {
        self.entries().clone()
    }

    /// Every line so far, in the order logged.
    pub fn lines(&self) -> Vec<String> {
        self.matching(|_| true)
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

    fn matching(&self, keep: impl Fn(&Captured) -> bool) -> Vec<String> {
        let entries = self.entries();
        entries
            .iter()
            .filter(|e| keep(e))
            .map(|e| e.line.clone())
            .collect()
    }

    fn entries(&self) -> MutexGuard<'_, Vec<Captured>> {
        // A test that panicked while logging leaves the events readable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Keeps tracing asking every live subscriber whether it wants a callsite.
///
/// Tests run in parallel, and tracing keeps each callsite's interest in a
/// global, computed when the callsite is first hit. While one subscriber
/// is registered, tracing computes it from the hitting thread's own
/// default: a test without a capture that first hits a callsite while
/// another test's capture is the only subscriber caches "never" for it,
/// and the capturing test loses its event (2 of 300 runs of the nginx
/// crate's tests). A second subscriber that lives as long as the process
/// (and enables nothing) prevents that; the interest is rebuilt once a
/// capture is the default, for a callsite registered while it was being
/// set up.
fn always_two_subscribers() {
    static ALWAYS_TWO: OnceLock<Dispatch> = OnceLock::new();
    ALWAYS_TWO.get_or_init(|| Dispatch::new(NoSubscriber::default()));
}

/// Records every field of an event, in the map and on the line.
struct Fields<'a> {
    map: &'a mut BTreeMap<String, String>,
    line: &'a mut String,
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.line
            .push_str(&format!(" {}={:?}", field.name(), value));
        self.map.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        let value = format!("{value:?}");
        self.line.push_str(&format!(" {}={value}", field.name()));
        self.map.insert(field.name().to_owned(), value);
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
        let mut fields = BTreeMap::new();
        e.record(&mut Fields {
            map: &mut fields,
            line: &mut line,
        });
        self.entries().push(Captured {
            level: *meta.level(),
            target: meta.target().to_owned(),
            fields,
            line,
        });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
