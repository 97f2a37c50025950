//! Counters per rule, readable from Rust, mirrored to the `metrics` facade.
//!
//! The metric names, their labels and what each counts are listed in the
//! guide's [Observability](crate::guide::observability) chapter.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::heavy::{TopK, DEFAULT_TOP};
use crate::KeyDigest;

mod striped;
use striped::Striped;

/// What happened to a request under one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Event {
    /// Admitted.
    Allowed,
    /// Refused by a blocking rule.
    Limited,
    /// Over the limit of a log rule, let through.
    WouldLimit,
    /// The backend could not answer; the rule let it through.
    FailOpen,
    /// The backend could not answer; 503.
    FailClosed,
    /// The rule matched but has expired.
    Expired,
    /// The request bypassed the rule through its allow list.
    Allowlisted,
    /// The rule matched but the cap of rules per request left it out.
    Capped,
}

impl Event {
    const fn metric(self) -> &'static str {
        match self {
            Event::Allowed => "ratelimit_allowed_total",
            Event::Limited => "ratelimit_limited_total",
            Event::WouldLimit => "ratelimit_would_limit_total",
            Event::FailOpen => "ratelimit_fail_open_total",
            Event::FailClosed => "ratelimit_fail_closed_total",
            Event::Expired => "ratelimit_expired_total",
            Event::Allowlisted => "ratelimit_allowlisted_total",
            Event::Capped => "ratelimit_rule_capped_total",
        }
    }
}

/// Every event, in the order of a rule's counters.
pub(crate) const EVENTS: [Event; 8] = [
    Event::Allowed,
    Event::Limited,
    Event::WouldLimit,
    Event::FailOpen,
    Event::FailClosed,
    Event::Expired,
    Event::Allowlisted,
    Event::Capped,
];

/// A subject a rule limited (or, in `log`, would have limited) most: on
/// one instance ([`RuleStats::top_hitters`]), or summed over the fleet
/// ([`FleetView::top_subjects`](crate::control::FleetView::top_subjects)).
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`, a test's fake) builds it field by field from what
/// it stored; a new field changes the stored schema, a breaking release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopSubject {
    /// The rule id.
    pub rule: String,
    /// The subject's digest: its identity, the one a lift takes.
    pub subject: KeyDigest,
    /// The client, readable (`ip=203.0.113.7`, `header:x-tenant=acme`),
    /// credentials redacted; `None` until the subject sends again after it
    /// entered the list (the label is read from one of its requests).
    pub label: Option<String>,
    /// How many times (an upper bound: a bounded sketch).
    pub count: u64,
}

/// Counters of one rule, and the subjects it (would have) limited most.
///
/// The `metrics` counters are registered when the rule is first published:
/// install the application's recorder before building the limiter.
#[derive(Debug)]
pub struct RuleStats {
    /// The rule id, named in each of [`RuleStats::top_hitters`].
    rule: Box<str>,
    /// One counter per [`Event`], per cache line (`stats/striped.rs`).
    counts: Striped,
    metrics: [metrics::Counter; 8],
    top_limited: Mutex<TopK>,
    /// The fingerprints of the subjects held in `top_limited` without a
    /// label (0: a free place): the next request of each gives its label,
    /// so clients that take turns are all labelled (issue 39, finding 5).
    /// At most the sketch's 16 subjects.
    wanted: [AtomicU64; DEFAULT_TOP],
    /// How many of `wanted` are set: one relaxed load per rule and request
    /// when every subject held has its label.
    wanting: AtomicU64,
}

/// The fingerprint `RuleStats::wanted` holds: never 0.
fn fingerprint(subject: &KeyDigest) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&subject.0[..8]);
    u64::from_le_bytes(b).max(1)
}

impl RuleStats {
    /// Counters of rule `id`.
    pub(crate) fn new(id: &str) -> Self {
        Self {
            rule: id.into(),
            counts: Default::default(),
            metrics: EVENTS.map(|e| metrics::counter!(e.metric(), "rule" => id.to_owned())),
            top_limited: Mutex::default(),
            wanted: Default::default(),
            wanting: AtomicU64::new(0),
        }
    }

    /// Counts `event` (also on the `metrics` facade).
    pub(crate) fn record(&self, event: Event) {
        self.counts.add(event as usize);
        self.metrics[event as usize].increment(1);
    }

    /// Counts a refusal (or, for a log rule, a would-be refusal) of
    /// `subject` in the heavy-hitters sketch.
    pub(crate) fn record_subject(&self, subject: KeyDigest) {
        let mut top = self.top_limited.lock().unwrap_or_else(|p| p.into_inner());
        if top.add(subject) {
            self.want_labels(&top);
        }
    }

    /// Sets `wanted` to the subjects `top` holds without a label (called
    /// under its lock, after a change).
    fn want_labels(&self, top: &TopK) {
        let mut n = 0;
        for (w, subject) in self.wanted.iter().zip(top.unlabeled()) {
            w.store(fingerprint(subject), Ordering::Relaxed);
            n += 1;
        }
        for w in &self.wanted[n..] {
            w.store(0, Ordering::Relaxed);
        }
        self.wanting.store(n as u64, Ordering::Relaxed);
    }

    /// Whether the sketch waits for `subject`'s label (then give it with
    /// [`RuleStats::give_label`]).
    #[inline(always)]
    pub(crate) fn wants_label(&self, subject: &KeyDigest) -> bool {
        self.wanting.load(Ordering::Relaxed) != 0 && self.wants_label_of(subject)
    }

    #[cold]
    fn wants_label_of(&self, subject: &KeyDigest) -> bool {
        let fp = fingerprint(subject);
        self.wanted.iter().any(|w| w.load(Ordering::Relaxed) == fp)
    }

    /// `subject`'s readable label, read from one of its requests.
    #[cold]
    pub(crate) fn give_label(&self, subject: KeyDigest, label: &str) {
        let mut top = self.top_limited.lock().unwrap_or_else(|p| p.into_inner());
        top.set_label(subject, label);
        self.want_labels(&top);
    }

    /// The subjects this rule limited (or, for a log rule, would have
    /// limited) most, with upper-bound counts: a bounded sketch.
    pub fn top_limited(&self) -> Vec<(KeyDigest, u64)> {
        self.top_limited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .top()
            .into_iter()
            .map(|(s, n, _)| (s, n))
            .collect()
    }

    /// [`RuleStats::top_limited`] with each subject's readable label: the
    /// IP or the key's values, credentials redacted (cookies, the
    /// `authorization` header, headers and query arguments named like a
    /// secret such as `x-api-key`). At most 16 subjects are held, each
    /// label at most 5 parts of 64 characters.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::{rules::RuleSet, Limiter, RequestAttrs};
    ///
    /// let rules = RuleSet::from_json(r#"[{"id": "api", "expression": "true",
    ///     "algorithm": "fixed_window", "limit": 1, "period": "1m",
    ///     "key": ["ip", "header:x-api-key"], "action": "log"}]"#).unwrap();
    /// let limiter = Limiter::new(rules);
    /// let req = RequestAttrs::new("203.0.113.7".parse().unwrap())
    ///     .with_header("x-api-key", "sk-live-123");
    /// for _ in 0..3 {
    ///     limiter.check(&req).into_ready().unwrap();
    /// }
    /// let top = limiter.rule_stats("api").unwrap().top_hitters();
    /// assert_eq!(top[0].count, 2);
    /// assert_eq!(
    ///     top[0].label.as_deref(),
    ///     Some("ip=203.0.113.7, header:x-api-key=[redacted]")
    /// );
    /// ```
    pub fn top_hitters(&self) -> Vec<TopSubject> {
        self.top_limited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .top()
            .into_iter()
            .map(|(subject, count, label)| TopSubject {
                rule: self.rule.to_string(),
                subject,
                label: label.map(str::to_owned),
                count,
            })
            .collect()
    }

    /// How many times `event` happened.
    pub(crate) fn get(&self, event: Event) -> u64 {
        self.counts.get(event as usize)
    }

    /// Requests the rule admitted.
    pub fn allowed(&self) -> u64 {
        self.get(Event::Allowed)
    }

    /// Requests the rule refused (blocking).
    pub fn limited(&self) -> u64 {
        self.get(Event::Limited)
    }

    /// Requests over the limit of the rule in `log` (or under a switch),
    /// let through.
    pub fn would_limit(&self) -> u64 {
        self.get(Event::WouldLimit)
    }

    /// Requests let through because the backend did not answer.
    pub fn fail_open(&self) -> u64 {
        self.get(Event::FailOpen)
    }

    /// Requests refused (503) because the backend did not answer.
    pub fn fail_closed(&self) -> u64 {
        self.get(Event::FailClosed)
    }

    /// Requests the rule matched after its `expires_at`.
    pub fn expired(&self) -> u64 {
        self.get(Event::Expired)
    }

    /// Requests on the rule's allow list.
    pub fn allowlisted(&self) -> u64 {
        self.get(Event::Allowlisted)
    }

    /// Requests the rule matched but the cap of 5 left out.
    pub fn capped(&self) -> u64 {
        self.get(Event::Capped)
    }
}

/// Counters of the whole limiter.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LimiterStats {
    /// Requests that matched more rules than the cap.
    pub capped: AtomicU64,
    /// Requests refused by the backstop.
    pub backstop_limited: AtomicU64,
    /// Charges after the response ([`Limiter::charge`](crate::Limiter::charge))
    /// lost because the backend did not answer (one per rule).
    pub charge_errors: AtomicU64,
}

impl LimiterStats {
    pub(crate) fn capped(&self) {
        self.capped.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("ratelimit_rules_capped_total").increment(1);
    }

    pub(crate) fn charge_error(&self) {
        self.charge_errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn backstop_limited(&self) {
        self.backstop_limited.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("ratelimit_backstop_limited_total").increment(1);
    }
}
