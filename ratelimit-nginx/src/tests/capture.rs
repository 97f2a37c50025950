//! A tracing subscriber that records events, to check what the error log says.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One recorded event: its level and its fields (`message` included).
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    pub(crate) level: Level,
    pub(crate) fields: BTreeMap<String, String>,
}

impl Captured {
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
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
pub(crate) fn events_of(f: impl FnOnce()) -> Vec<Captured> {
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), f);
    let events = capture
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    events.clone()
}
