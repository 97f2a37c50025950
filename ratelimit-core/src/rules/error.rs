//! Errors and warnings of rule loading; each names the rule id and the field.

use std::fmt;

/// A rule set that cannot load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    rule: Option<String>,
    field: Option<String>,
    message: String,
}

impl RuleError {
    pub(crate) fn new(rule: Option<&str>, field: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            rule: rule.map(str::to_owned),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }

    /// The offending rule's id, when known.
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }

    /// The offending field, when one is to blame.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.rule, &self.field) {
            (Some(r), Some(fl)) => write!(f, "rule {r:?}, field {fl:?}: {}", self.message),
            (Some(r), None) => write!(f, "rule {r:?}: {}", self.message),
            (None, Some(fl)) => write!(f, "field {fl:?}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RuleError {}

/// Something worth telling about a rule set that still loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The rule's id.
    pub rule: String,
    /// The field.
    pub field: String,
    /// What to know.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule {:?}, field {:?}: {}",
            self.rule, self.field, self.message
        )
    }
}
