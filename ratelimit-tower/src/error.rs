//! Why a rule file could not be loaded.

use std::fmt;
use std::path::PathBuf;

use ratelimit_core::rules::RuleError;

/// A rule file that could not be read or did not validate.
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence:
///
/// ```text
/// Error: invalid rules: rule "login", field "period": "1 minute" is not a duration: use "1m" (units s, m, h, d, without spaces)
/// ```
///
/// `{:#?}` shows the variant and its fields (or match on it).
///
/// # Examples
///
/// ```
/// use ratelimit_tower::RateLimitLayer;
///
/// let path = std::env::temp_dir().join(format!("rules-{}.json", std::process::id()));
/// std::fs::write(&path, r#"[{"id": "login", "expression": "true",
///     "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"],
///     "ratelimit_header": true}]"#)?;
/// let err = RateLimitLayer::from_json_file(&path).unwrap_err();
/// assert_eq!(
///     format!("{err:?}"),
///     r#"invalid rules: rule "login", field "ratelimit_header": unknown field: did you mean "ratelimit_headers"?"#
/// );
/// assert!(format!("{err:#?}").starts_with("Rules(\n    RuleError {"));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
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

/// The `Display` form; `{:#?}` the variant and its fields.
impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            LoadError::Io { path, source } => f
                .debug_struct("Io")
                .field("path", path)
                .field("source", source)
                .finish(),
            LoadError::Rules(e) => f.debug_tuple("Rules").field(e).finish(),
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
