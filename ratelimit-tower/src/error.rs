//! Why a rule file could not be loaded.

use std::fmt;
use std::path::PathBuf;

use ratelimit_core::rules::RuleError;

/// A rule file that could not be read or did not validate.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rules did not validate; the error names the rule and the field.
    Rules(RuleError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            LoadError::Rules(e) => write!(f, "invalid rules: {e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Rules(e) => Some(e),
        }
    }
}

impl From<RuleError> for LoadError {
    fn from(e: RuleError) -> Self {
        LoadError::Rules(e)
    }
}
