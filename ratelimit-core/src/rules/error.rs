//! Errors and warnings of rule loading; each names the rule id and the field.

use std::fmt;

/// A rule set that cannot load.
///
/// `Display` and `{:?}` both read `rule "login", field "period": ...`, so
/// that an error returned from `main` with `?` prints as a sentence;
/// `{:#?}` shows the fields, and [`RuleError::rule`],
/// [`RuleError::field`] and [`RuleError::message`] give them one by one.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleSet;
///
/// let err = RuleSet::from_json(r#"[{"id": "login", "expression": "true",
///     "algorithm": "fixed_window", "limit": 5, "period": "1 minute",
///     "key": ["ip"]}]"#).unwrap_err();
/// let shown = r#"rule "login", field "period": "1 minute" is not a duration: use "1m" (units s, m, h, d, without spaces)"#;
/// assert_eq!(err.to_string(), shown);
/// assert_eq!(format!("{err:?}"), shown);
/// assert!(format!("{err:#?}").starts_with("RuleError {\n    rule: Some(\n        \"login\","));
/// ```
#[derive(Clone, PartialEq, Eq)]
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

/// The `Display` form; `{:#?}` the fields.
impl fmt::Debug for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        f.debug_struct("RuleError")
            .field("rule", &self.rule)
            .field("field", &self.field)
            .field("message", &self.message)
            .finish()
    }
}

impl std::error::Error for RuleError {}

/// Something worth telling about a rule set that still loads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
