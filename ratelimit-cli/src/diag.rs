//! What `check` and `audit` report: one diagnostic per problem, as text
//! (`file:line:column: error: ...`) or as JSON for CI annotations.

use std::fmt;

use serde_json::{json, Value};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Severity {
    /// The file does not load.
    Error,
    /// The file loads; something is worth knowing.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The file, as given on the command line.
    pub file: String,
    /// Where in it, when known (1-based line and column).
    pub position: Option<crate::locate::Position>,
    /// Error or warning.
    pub severity: Severity,
    /// The rule's id (or `#index` for a rule without a usable id).
    pub rule: Option<String>,
    /// The field to blame.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(p) = self.position {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        write!(f, ": {}: ", self.severity)?;
        match (&self.rule, &self.field) {
            (Some(r), Some(fl)) => write!(f, "rule {r:?}, field {fl:?}: ")?,
            (Some(r), None) => write!(f, "rule {r:?}: ")?,
            (None, Some(fl)) => write!(f, "field {fl:?}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl Diagnostic {
    /// As a JSON object: `file`, `line`, `column`, `severity`, `rule`,
    /// `field`, `message` (absent parts `null`).
    pub fn to_json(&self) -> Value {
        json!({
            "file": self.file,
            "line": self.position.map(|p| p.line),
            "column": self.position.map(|p| p.column),
            "severity": self.severity.to_string(),
            "rule": self.rule,
            "field": self.field,
            "message": self.message,
        })
    }
}
