//! Errors and warnings of rule loading; each names the rule id and the field.

use std::fmt;

/// A rule set that cannot load.
///
/// `Display` and `{:?}` both read `rule "login", field "period": ...`, so
/// that an error returned from `main` with `?` prints as a sentence;
/// `{:#?}` shows the fields, and [`RuleError::rule`],
/// [`RuleError::field`] and [`RuleError::message`] give them one by one.
///
/// Loading reports every error it finds, not only the first: each field
/// of each rule that is wrong (one error a field). The error is the first
/// of them; [`RuleError::others`] holds the rest, and `Display` prints them
/// all, one a line. Checks across rules (repeated ids, the site-wide cap,
/// partners) run once every rule loads on its own.
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
///
/// // A bad period and a bad expression in one rule: both are reported.
/// let err = RuleSet::from_json(r#"[{"id": "login", "expression": "http.host eq 'a'",
///     "algorithm": "fixed_window", "limit": 5, "period": "1 minute",
///     "key": ["ip"]}]"#).unwrap_err();
/// assert_eq!(err.field(), Some("period"));
/// assert_eq!(err.others().len(), 1);
/// assert_eq!(err.others()[0].field(), Some("expression"));
/// assert_eq!(err.to_string().lines().count(), 2);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RuleError {
    rule: Option<String>,
    field: Option<String>,
    message: String,
    /// The errors found after this one, each with no others of its own.
    others: Vec<RuleError>,
}

impl RuleError {
    pub(crate) fn new(rule: Option<&str>, field: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            rule: rule.map(str::to_owned),
            field: field.map(str::to_owned),
            message: message.into(),
            others: Vec::new(),
        }
    }

    /// One error for all of `errors` (the first, the rest as its
    /// [`others`](Self::others)); `None` when there are none.
    pub(crate) fn all(errors: impl IntoIterator<Item = RuleError>) -> Option<RuleError> {
        let mut flat = errors.into_iter().flat_map(|mut e| {
            let others = std::mem::take(&mut e.others);
            std::iter::once(e).chain(others)
        });
        let mut first = flat.next()?;
        first.others = flat.collect();
        Some(first)
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

    /// The other errors loading found, after this one, in the order of the
    /// rules and of their fields; empty when this is the only one.
    pub fn others(&self) -> &[RuleError] {
        &self.others
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.rule, &self.field) {
            (Some(r), Some(fl)) => write!(f, "rule {r:?}, field {fl:?}: {}", self.message),
            (Some(r), None) => write!(f, "rule {r:?}: {}", self.message),
            (None, Some(fl)) => write!(f, "field {fl:?}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }?;
        for other in &self.others {
            write!(f, "\n{other}")?;
        }
        Ok(())
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
            .field("others", &self.others)
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
