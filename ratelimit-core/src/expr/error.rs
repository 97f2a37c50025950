//! The error returned when an expression is refused.
//!
//! An [`ExprError`] carries the 1-based column, counted in characters, of the
//! place the parser gave up, and a short lowercase message. Its `Display` is
//! `column 12: expected a value after `eq``.

use std::fmt;

/// Why a match expression was refused, and where.
///
/// # Examples
///
/// ```
/// use ratelimit_core::Expression;
///
/// let err = Expression::parse("http.host eq").unwrap_err();
/// assert_eq!(err.column(), 13);
/// assert_eq!(err.message(), "expected a value after `eq`");
/// assert_eq!(err.to_string(), "column 13: expected a value after `eq`");
/// assert_eq!(format!("{err:?}"), err.to_string(), "as `main` shows it");
/// ```
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence; `{:#?}` shows the fields.
#[derive(Clone, PartialEq, Eq)]
pub struct ExprError {
    column: usize,
    message: String,
}

impl ExprError {
    /// An error at `column` (1-based, in characters).
    pub(crate) fn new(column: usize, message: impl Into<String>) -> Self {
        Self {
            column,
            message: message.into(),
        }
    }

    /// The 1-based column, counted in characters, where the problem is.
    ///
    /// One past the last character when the expression ended too early.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What is wrong, short and lowercase, without the column.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

/// The `Display` form; `{:#?}` the fields.
impl fmt::Debug for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        f.debug_struct("ExprError")
            .field("column", &self.column)
            .field("message", &self.message)
            .finish()
    }
}

impl std::error::Error for ExprError {}

/// Quotes a piece of user input for a message, shortened when long and with
/// control characters escaped.
pub(super) fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 32;
    let mut out = String::from("`");
    for (i, c) in text.chars().enumerate() {
        if i == MAX_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_column_then_message() {
        let err = ExprError::new(12, "expected a value after `eq`");
        assert_eq!(err.to_string(), "column 12: expected a value after `eq`");
        assert_eq!(err.column(), 12);
        assert_eq!(err.message(), "expected a value after `eq`");
    }

    #[test]
    fn error_is_a_std_error() {
        fn takes(_: &dyn std::error::Error) {}
        takes(&ExprError::new(1, "x"));
    }

    #[test]
    fn quote_shortens_long_input_and_escapes_controls() {
        assert_eq!(quote("eq"), "`eq`");
        assert_eq!(quote("a\nb"), "`a\\nb`");
        let long = "x".repeat(40);
        assert_eq!(quote(&long), format!("`{}…`", "x".repeat(32)));
    }
}
