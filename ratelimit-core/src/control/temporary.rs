//! Rules added at run time through the control (an autopilot's way in):
//! each runs on every instance until its `expires_at`, at most 24 hours
//! ahead.

use crate::rules::{Rule, RuleSet};

use super::ControlError;

/// A rule added at run time through [`Control::add_temporary`](super::Control::add_temporary),
/// with who added it and why.
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`) builds it field by field from what it stored; a
/// new field changes the stored record, a breaking release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporaryRule {
    /// The rule; its `expires_at` is when it stops on every instance.
    pub rule: Rule,
    /// Who added it and why: free text from the caller.
    pub note: String,
    /// When it was added, in milliseconds since the Unix epoch.
    pub added_ms: u64,
}

impl TemporaryRule {
    /// The most rules added at run time a control keeps at once: 100.
    pub const MAX: usize = 100;

    /// The longest note kept with one: 1,000 bytes.
    pub const MAX_NOTE_BYTES: usize = 1000;

    /// When the rule stops, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.rule.expires_at_ms.unwrap_or(0)
    }

    /// Checks a rule before it is added at `now_ms` next to the published
    /// `set` and the `others` running (a rule of the same id among them
    /// is the one it replaces): an `expires_at` after `now_ms` and at most
    /// 24 hours ahead, an id the set does not use, a combination the set
    /// accepts (the site-wide cap, partners), at most [`TemporaryRule::MAX`]
    /// rules and a note of at most [`TemporaryRule::MAX_NOTE_BYTES`].
    ///
    /// # Errors
    ///
    /// [`ControlError::Invalid`] naming the rule id and the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::control::TemporaryRule;
    /// use ratelimit_core::rules::{Rule, RuleSet};
    ///
    /// let set = RuleSet::from_json(r#"[{"id": "api", "expression": "true",
    ///     "algorithm": "fixed_window", "limit": 10, "period": "1m", "key": ["ip"]}]"#).unwrap();
    /// let now = 1_767_225_600_000;
    /// let rule = |id: &str, expires: &str| -> Rule {
    ///     let json = format!(r#"[{{"id": "{id}", "expression": "true", "algorithm": "fixed_window",
    ///         "limit": 1, "period": "1m", "key": ["ip"], "expires_at": "{expires}"}}]"#);
    ///     (*RuleSet::from_json_at(&json, now).unwrap().rules()[0]).clone()
    /// };
    /// assert!(TemporaryRule::check(&rule("surge", "2026-01-01T01:00:00Z"), "", &set, &[], now).is_ok());
    /// let late = TemporaryRule::check(&rule("surge", "2026-01-03T00:00:00Z"), "", &set, &[], now);
    /// assert!(late.unwrap_err().to_string().contains("24 hours"));
    /// let taken = TemporaryRule::check(&rule("api", "2026-01-01T01:00:00Z"), "", &set, &[], now);
    /// assert!(taken.unwrap_err().to_string().contains("\"api\""));
    /// ```
    pub fn check(
        rule: &Rule,
        note: &str,
        set: &RuleSet,
        others: &[&Rule],
        now_ms: u64,
    ) -> Result<(), ControlError> {
        let invalid = |e: crate::rules::RuleError| ControlError::Invalid(e.to_string());
        crate::limiter::check_expiry(rule, now_ms).map_err(invalid)?;
        if note.len() > Self::MAX_NOTE_BYTES {
            return Err(ControlError::Invalid(format!(
                "rule {:?}: the note is {} bytes, over the limit of {}",
                rule.id,
                note.len(),
                Self::MAX_NOTE_BYTES
            )));
        }
        let mut all: Vec<&Rule> = others
            .iter()
            .copied()
            .filter(|r| r.id != rule.id && !r.expired_at(now_ms))
            .collect();
        if all.len() >= Self::MAX {
            return Err(ControlError::Invalid(format!(
                "rule {:?}: {} rules added at run time already run, the most kept at once",
                rule.id,
                Self::MAX
            )));
        }
        all.push(rule);
        set.check_with(&all).map_err(invalid)
    }
}
