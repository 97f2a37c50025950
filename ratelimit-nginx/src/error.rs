//! Configuration errors that name the line, column and directive.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{ConfigErrorKind, NginxConfig};
//!
//! let err = NginxConfig::parse("# zones\nlimit_req_zone $client_ip zone=one:10m rate=fast;")
//!     .unwrap_err();
//! assert_eq!(err.line(), Some(2));
//! assert_eq!(err.column(), Some(40));
//! assert_eq!(err.directive(), Some("limit_req_zone"));
//! assert_eq!(err.kind(), &ConfigErrorKind::InvalidValue);
//! assert_eq!(
//!     err.to_string(),
//!     "line 2, column 40: limit_req_zone: invalid rate \"rate=fast\""
//! );
//! ```

use std::fmt;

/// Where a token starts in the configuration text, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    line: u32,
    column: u32,
}

impl Span {
    /// A position: `line` and `column` (in characters) counted from 1.
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }

    /// The line, from 1.
    pub const fn line(&self) -> u32 {
        self.line
    }

    /// The column in characters, from 1.
    pub const fn column(&self) -> u32 {
        self.column
    }
}

/// What was wrong with a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The text does not split into directives: an open quote, a brace, a missing `;`.
    Syntax,
    /// A directive that this module does not know.
    UnknownDirective,
    /// A directive that is not allowed where it is written.
    NotAllowedHere,
    /// A wrong number of arguments.
    Arguments,
    /// An argument whose value is invalid.
    InvalidValue,
    /// A key variable that does not exist.
    UnknownVariable,
    /// A credential header used in a key.
    CredentialInKey,
    /// A zone whose size holds no state, or is too large.
    ZoneSize,
    /// A zone name defined twice (names are shared by both kinds).
    DuplicateZone,
    /// A zone that is not defined, or is of the other kind.
    UnknownZone,
    /// A directive or zone given twice in one level.
    Duplicate,
    /// The memory of a zone could not be allocated.
    Allocation,
}

/// An invalid configuration, with the position and directive when known.
///
/// `{:?}` is the `Display` form (`line 3, column 5: limit_req: ...`), so
/// that an error returned from `main` with `?` prints as a sentence;
/// `{:#?}` shows the fields, and the accessors give them one by one.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    message: String,
    directive: Option<String>,
    span: Option<Span>,
}

impl ConfigError {
    pub(crate) fn new(kind: ConfigErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            directive: None,
            span: None,
        }
    }

    /// Sets the position unless one is already known.
    pub(crate) fn at(mut self, span: Option<Span>) -> Self {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }

    /// Sets the directive unless one is already known.
    pub(crate) fn in_directive(mut self, name: &str) -> Self {
        if self.directive.is_none() {
            self.directive = Some(name.to_owned());
        }
        self
    }

    /// What was wrong.
    pub fn kind(&self) -> &ConfigErrorKind {
        &self.kind
    }

    /// The line of the offending token, from 1; `None` for builder input.
    pub fn line(&self) -> Option<u32> {
        self.span.map(|s| s.line)
    }

    /// The column of the offending token, from 1; `None` for builder input.
    pub fn column(&self) -> Option<u32> {
        self.span.map(|s| s.column)
    }

    /// The directive being read, such as `limit_req`.
    pub fn directive(&self) -> Option<&str> {
        self.directive.as_deref()
    }

    /// The message, without position or directive.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(span) = self.span {
            write!(f, "line {}, column {}: ", span.line, span.column)?;
        }
        if let Some(directive) = &self.directive {
            write!(f, "{directive}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// The `Display` form; `{:#?}` the fields.
impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        f.debug_struct("ConfigError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("directive", &self.directive)
            .field("span", &self.span)
            .finish()
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27, item 10: `main` prints an error returned with `?` as
    /// `{:?}`.
    #[test]
    fn debug_reads_as_display_and_alternate_shows_the_fields() {
        let e = ConfigError::new(ConfigErrorKind::InvalidValue, "invalid burst value \"0\"")
            .at(Some(Span::new(3, 5)))
            .in_directive("limit_req");
        assert_eq!(
            format!("{e:?}"),
            "line 3, column 5: limit_req: invalid burst value \"0\""
        );
        assert!(format!("{e:#?}").starts_with("ConfigError {\n    kind: InvalidValue,"));
    }

    #[test]
    fn display_without_position_names_only_the_directive() {
        let e = ConfigError::new(ConfigErrorKind::InvalidValue, "invalid burst value \"0\"")
            .in_directive("limit_req");
        assert_eq!(e.to_string(), "limit_req: invalid burst value \"0\"");
        assert_eq!(e.line(), None);
    }

    #[test]
    fn first_position_and_directive_win() {
        let e = ConfigError::new(ConfigErrorKind::Syntax, "x")
            .at(Some(Span::new(3, 4)))
            .at(Some(Span::new(9, 9)))
            .in_directive("a")
            .in_directive("b");
        assert_eq!(
            (e.line(), e.column(), e.directive()),
            (Some(3), Some(4), Some("a"))
        );
    }
}
