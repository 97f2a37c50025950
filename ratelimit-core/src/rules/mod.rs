//! The JSON rule model and its validation.
//!
//! A rule set is a JSON list of rules (or an object with a `rules` list),
//! field for field as the guide's [Rules](crate::guide::rules) chapter
//! documents it. Loading validates everything and
//! refuses with a [`RuleError`] that names the rule id and the field;
//! [`Warning`]s are returned beside the rules, never printed (a rule file
//! loaded with [`RuleSet::from_json_file`] also logs each at `warn`).
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::rules::RuleSet;
//!
//! let set = RuleSet::from_json(r#"[{
//!     "id": "login",
//!     "expression": "http.request.uri.path eq \"/login\"",
//!     "algorithm": "sliding_window",
//!     "limit": 5,
//!     "period": "1m",
//!     "key": ["ip"],
//!     "on_missing_key": "fallback_ip",
//!     "action": "block",
//!     "penalty": "5m",
//!     "fail_mode": "open"
//! }]"#).unwrap();
//! assert_eq!(set.rules()[0].limit, 5);
//!
//! let err = RuleSet::from_json(r#"[{"id": "x", "expression": "true",
//!     "algorithm": "fixed_window", "limit": 0, "period": "1m", "key": ["ip"]}]"#)
//!     .unwrap_err();
//! assert_eq!((err.rule(), err.field()), (Some("x"), Some("limit")));
//! ```

mod allow;
mod builder;
mod caps;
mod crowding;
mod duration;
mod error;
mod export;
mod file;
mod parts;
mod raw;
mod rule;
mod schema;
mod validate;

use std::sync::Arc;

pub use allow::AllowList;
pub use builder::RuleBuilder;
pub(crate) use caps::{MAX_COUNT_RULES, MAX_OTHER_RULES, MAX_SITE_WIDE};
pub use error::{RuleError, Warning};
pub use file::RuleFileError;
pub use parts::{DistinctOf, KeyPart, StatusMatch};
#[cfg(test)]
pub(crate) use raw::FIELDS;
pub(crate) use rule::in_canary;
pub use rule::{Action, Charge, FailMode, OnMissingKey, Rule};

use crate::{Clock, SystemClock};

/// A validated set of rules.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleSet;
///
/// let rules = RuleSet::from_json(r#"[{
///     "id": "api", "expression": "true",
///     "algorithm": "token_bucket", "limit": 100, "period": "1m", "burst": 20,
///     "key": ["ip"]
/// }]"#)?;
/// assert_eq!(rules.get("api").map(|r| r.limit), Some(100));
/// assert!(RuleSet::from_json(r#"[{"id": "api"}]"#).is_err());
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
///
/// Write it back as JSON with [`RuleSet::to_json`] (or `serde`); equality
/// compares the rules and the warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: Vec<Arc<Rule>>,
    warnings: Vec<Warning>,
}

impl RuleSet {
    /// Loads and validates a JSON rule set; warnings judge `expires_at`
    /// against the system clock.
    ///
    /// # Errors
    ///
    /// Invalid JSON, an unknown field, a value out of range, a field missing
    /// or forbidden for the algorithm, a bad key, more than 2 site-wide
    /// rules, an attacker-controlled key without partner, ...: the error
    /// names the rule id and the field, and carries every other error found
    /// ([`RuleError::others`]).
    pub fn from_json(json: &str) -> Result<RuleSet, RuleError> {
        Self::from_json_at(json, SystemClock.now_ms())
    }

    /// Like [`RuleSet::from_json`], judging expiry at `now_ms`.
    ///
    /// # Errors
    ///
    /// As [`RuleSet::from_json`].
    pub fn from_json_at(json: &str, now_ms: u64) -> Result<RuleSet, RuleError> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| RuleError::new(None, None, format!("invalid JSON: {e}")))?;
        let list = match &value {
            serde_json::Value::Array(a) => a,
            serde_json::Value::Object(o) => match o.get("rules") {
                Some(serde_json::Value::Array(a)) if o.len() == 1 => a,
                _ => {
                    return Err(RuleError::new(
                        None,
                        Some("rules"),
                        "expected a list of rules, or {\"rules\": [...]}",
                    ))
                }
            },
            _ => return Err(RuleError::new(None, None, "expected a list of rules")),
        };
        let mut rules = Vec::with_capacity(list.len());
        let mut errors = Vec::new();
        for (i, v) in list.iter().enumerate() {
            match raw::RawRule::from_json(v, i).and_then(validate::rule) {
                Ok(rule) => rules.push(rule),
                Err(e) => errors.push(e),
            }
        }
        match RuleError::all(errors) {
            Some(e) => Err(e),
            None => Self::from_rules_at(rules, now_ms),
        }
    }

    /// A set from rules built in Rust.
    ///
    /// # Errors
    ///
    /// Duplicate ids, more than 2 site-wide rules, or an attacker-controlled
    /// key without partner.
    pub fn from_rules(rules: Vec<Rule>) -> Result<RuleSet, RuleError> {
        Self::from_rules_at(rules, SystemClock.now_ms())
    }

    /// Like [`RuleSet::from_rules`], judging expiry at `now_ms`.
    ///
    /// # Errors
    ///
    /// As [`RuleSet::from_rules`].
    pub fn from_rules_at(rules: Vec<Rule>, now_ms: u64) -> Result<RuleSet, RuleError> {
        validate::set(&rules.iter().collect::<Vec<_>>())?;
        let warnings = validate::warnings(&rules, now_ms);
        Ok(RuleSet {
            rules: rules.into_iter().map(Arc::new).collect(),
            warnings,
        })
    }

    /// The rules, in the order written.
    pub fn rules(&self) -> &[Arc<Rule>] {
        &self.rules
    }

    /// What loading had to say.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Validates `extra` rules (added at run time) together with this set:
    /// unique ids, the site-wide cap, partners for client-chosen keys.
    ///
    /// # Errors
    ///
    /// What [`RuleSet::from_rules`] refuses, for the combined set.
    pub fn check_with(&self, extra: &[&Rule]) -> Result<(), RuleError> {
        let mut all: Vec<&Rule> = self.rules.iter().map(|r| &**r).collect();
        all.extend_from_slice(extra);
        validate::set(&all)
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Arc<Rule>> {
        self.rules.iter().find(|r| r.id == id)
    }
}

#[cfg(test)]
mod tests;
