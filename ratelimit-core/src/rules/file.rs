//! Loading a rule set from a JSON file: [`RuleSet::from_json_file`] and
//! its error, [`RuleFileError`].

use std::fmt;
use std::path::{Path, PathBuf};

use super::{RuleError, RuleSet, Warning};

/// A rule file that could not be read or did not validate.
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence; `{:#?}` shows the variant and its fields
/// (or match on it).
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::{RuleFileError, RuleSet};
///
/// let err = RuleSet::from_json_file("no/such/rules.json").unwrap_err();
/// assert!(matches!(err, RuleFileError::Io { .. }));
/// assert!(err.to_string().starts_with("cannot read no/such/rules.json: "));
/// ```
///
/// Exhaustive on purpose: a rule file is either unreadable or its rules do
/// not validate; callers map the two (`ratelimit-tower`'s `LoadError`).
pub enum RuleFileError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rules did not validate; the error names the rule and the field.
    Rules {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the rule and the field.
        source: RuleError,
    },
}

impl fmt::Display for RuleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleFileError::Io { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            RuleFileError::Rules { path, source } => {
                write!(f, "invalid rules in {}: {source}", path.display())
            }
        }
    }
}

/// The `Display` form; `{:#?}` the variant and its fields.
impl fmt::Debug for RuleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        let (name, path, source): (_, _, &dyn fmt::Debug) = match self {
            RuleFileError::Io { path, source } => ("Io", path, source),
            RuleFileError::Rules { path, source } => ("Rules", path, source),
        };
        f.debug_struct(name)
            .field("path", path)
            .field("source", source)
            .finish()
    }
}

impl std::error::Error for RuleFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuleFileError::Io { source, .. } => Some(source),
            RuleFileError::Rules { source, .. } => Some(source),
        }
    }
}

impl RuleSet {
    /// Loads and validates the JSON rule file at `path`, as
    /// [`RuleSet::from_json`] does its text, and logs each of the set's
    /// [warnings](RuleSet::warnings) at `warn` (`tracing`, target
    /// `ratelimit_core::rules`, with the file, the rule and the field):
    /// a service started from a file says what its rules will not do as
    /// written. They stay in [`RuleSet::warnings`] as well.
    ///
    /// # Errors
    ///
    /// The file cannot be read ([`RuleFileError::Io`]), or its rules do not
    /// validate ([`RuleFileError::Rules`], naming the rule and the field).
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// # let dir = std::env::temp_dir().join(format!("rules-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let path = dir.join("rules.json");
    /// # std::fs::write(&path, r#"[{"id": "api", "expression": "true",
    /// #     "algorithm": "sliding_window", "limit": 100, "period": "1m", "key": ["ip"]}]"#)?;
    /// let rules = RuleSet::from_json_file(&path)?;
    /// assert!(rules.get("api").is_some());
    /// let limiter = Limiter::new(rules);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<RuleSet, RuleFileError> {
        let path = path.as_ref();
        let json = std::fs::read_to_string(path).map_err(|source| RuleFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        let set = RuleSet::from_json(&json).map_err(|source| RuleFileError::Rules {
            path: path.to_owned(),
            source,
        })?;
        log_warnings(path, set.warnings());
        Ok(set)
    }
}

/// One `warn` event per warning of the rule file at `path`.
fn log_warnings(path: &Path, warnings: &[Warning]) {
    for w in warnings {
        tracing::warn!(
            target: "ratelimit_core::rules",
            file = %path.display(),
            rule = %w.rule,
            field = %w.field,
            "{w}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule that does not validate names the file, the rule and the
    /// field; a set that loads keeps its warnings.
    #[test]
    fn a_rule_file_names_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("ratelimit-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(
            &bad,
            r#"[{"id": "x", "expression": "true", "algorithm": "fixed_window",
                "limit": 0, "period": "1m", "key": ["ip"]}]"#,
        )
        .unwrap();
        let good = dir.join("good.json");
        std::fs::write(
            &good,
            r#"[{"id": "y", "expression": "true", "algorithm": "fixed_window",
                "limit": 5, "period": "1m", "key": ["ip", "header:x-user"],
                "on_missing_key": "skip"}]"#,
        )
        .unwrap();
        let err = RuleSet::from_json_file(&bad).unwrap_err();
        let loaded = RuleSet::from_json_file(&good);
        std::fs::remove_dir_all(&dir).unwrap();
        let RuleFileError::Rules { path, source } = &err else {
            panic!("not a rule error: {err}");
        };
        assert_eq!(
            (path, source.rule(), source.field()),
            (&bad, Some("x"), Some("limit"))
        );
        let shown = format!(
            "invalid rules in {}: rule \"x\", field \"limit\": ",
            bad.display()
        );
        assert!(err.to_string().starts_with(&shown), "{err}");
        assert_eq!(format!("{err:?}"), err.to_string());
        assert!(format!("{err:#?}").starts_with("Rules {"), "{err:#?}");
        let warnings = loaded.unwrap().warnings().to_vec();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].field, "on_missing_key");
    }
}
