//! One finding of the audit: severity, rule, what is wrong, the fix, and
//! the checklist line it comes from.

use std::fmt;

use serde_json::{json, Value};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Level {
    /// The rule set does not load.
    Error,
    /// A gate of the checklist fails.
    Warning,
    /// Worth knowing; never fails the audit.
    Info,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
        })
    }
}

/// A gate of the checklist: its code, where it comes from, the guide
/// section that explains it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gate {
    /// A stable code, `RL001` ...
    pub code: &'static str,
    /// A short name.
    pub name: &'static str,
    /// The line of the production checklist (or the rule engine seed) it
    /// comes from, quoted.
    pub source: &'static str,
    /// The guide section to read.
    pub guide: &'static str,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The gate.
    pub gate: &'static Gate,
    /// How much it matters.
    pub level: Level,
    /// The rule, when one is to blame.
    pub rule: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// What to do.
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.level, self.gate.code, self.gate.name)?;
        if let Some(r) = &self.rule {
            write!(f, " (rule {r:?})")?;
        }
        write!(
            f,
            "\n  problem:   {}\n  fix:       {}\n  checklist: {}\n  guide:     {}",
            self.problem, self.fix, self.gate.source, self.gate.guide
        )
    }
}

impl Finding {
    /// As a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "code": self.gate.code,
            "gate": self.gate.name,
            "severity": self.level.to_string(),
            "rule": self.rule,
            "problem": self.problem,
            "fix": self.fix,
            "checklist": self.gate.source,
            "guide": self.gate.guide,
        })
    }
}
