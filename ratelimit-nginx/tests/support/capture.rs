//! A tracing subscriber that records events, to check what the error log says.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::NoSubscriber;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

/// One recorded event: its level and its fields (`message` included).
#[derive(Debug, Clone)]
pub struct Captured {
    pub level: Level,
    pub fields: BTreeMap<String, String>,
}

impl Captured {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

#[derive(Clone, Default)]
struct Capture {
    events: Arc<Mutex<Vec<Captured>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
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

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let captured = Captured {
            level: *event.metadata().level(),
            fields,
        };
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(captured);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Runs `f` and returns what it logged.
///
/// Tests run in parallel, and tracing keeps each callsite's interest in a
/// global, computed when the callsite is first hit. While one subscriber
/// is registered, tracing computes it from the hitting thread's own
/// default: a test without a capture that first hits a callsite while
/// another test's capture is the only subscriber caches "never" for it,
/// and the capturing test loses its event (2 of 300 runs of this crate's
/// tests). A second subscriber that lives as long as the process (and
/// enables nothing) keeps tracing asking every live subscriber; the
/// interest is rebuilt once this capture is the default, for a callsite
/// registered while it was being set up.
pub fn events_of(f: impl FnOnce()) -> Vec<Captured> {
    static ALWAYS_TWO: OnceLock<Dispatch> = OnceLock::new();
    ALWAYS_TWO.get_or_init(|| Dispatch::new(NoSubscriber::default()));
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), || {
        tracing::callsite::rebuild_interest_cache();
        f()
    });
    let events = capture
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    events.clone()
}
