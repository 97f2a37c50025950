//! Match expressions: a documented subset of the Cloudflare rules language.
//!
//! The `expression` of a rate-limit rule selects the requests the rule
//! counts. [`Expression::parse`] checks it once, when the rules load, and
//! [`Expression::matches`] tests a request ([`RequestView`], such as a
//! [`RequestAttrs`](crate::RequestAttrs))
//! against it on every request. The language (fields, operators, values,
//! the limits on regular expressions) is described in the guide's
//! [Expressions](crate::guide::expressions) chapter.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{Expression, RequestAttrs};
//!
//! let login: Expression = r#"http.request.uri.path eq "/login""#.parse()?;
//! assert!(login.matches(&RequestAttrs::new("192.0.2.1".parse()?).with_path("/login")));
//! assert!(Expression::parse(" ( true ) ")?.is_always_true());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ast;
mod error;
mod eval;
mod lexer;
mod operator;
mod parser;
mod pattern;
mod regex_cost;
mod subject;
mod vouched;

use std::fmt;
use std::str::FromStr;

pub use error::ExprError;

#[cfg(test)]
use crate::RequestAttrs;
use crate::RequestView;

/// The longest expression accepted, in bytes.
const MAX_SOURCE_BYTES: usize = 16 * 1024;

/// A parsed match expression, ready to test requests.
///
/// # Examples
///
/// ```
/// use ratelimit_core::{Expression, RequestAttrs};
///
/// let e = Expression::parse(r#"http.request.uri.path eq "/login" and ip.src in {10.0.0.0/8}"#)?;
/// let req = RequestAttrs::new("10.1.2.3".parse().unwrap()).with_path("/login");
/// assert!(e.matches(&req));
/// assert!(!e.matches(&req.clone().with_path("/")));
/// assert!(Expression::parse("http.request.uri.path eq").is_err());
/// # Ok::<(), ratelimit_core::ExprError>(())
/// ```
///
/// Cloning copies the tree (compiled regular expressions share their program).
#[derive(Debug, Clone)]
pub struct Expression {
    root: ast::Node,
    source: String,
}

impl Expression {
    /// Parses `src`.
    ///
    /// # Errors
    ///
    /// An [`ExprError`] with the column of the first problem: input over
    /// 16 KiB, a character outside the language, an unterminated string, an
    /// unknown field or function, a missing operator, value, `)`, `]` or `}`,
    /// an invalid address, network or regular expression, a pattern over 1000
    /// characters, too large compiled or too costly to run on every request
    /// (its automaton over 2 MiB, or a Unicode word boundary), or nesting
    /// deeper than 64 levels.
    pub fn parse(src: &str) -> Result<Expression, ExprError> {
        if src.len() > MAX_SOURCE_BYTES {
            let column = src
                .char_indices()
                .take_while(|&(i, c)| i + c.len_utf8() <= MAX_SOURCE_BYTES)
                .count()
                + 1;
            let msg = format!("expression longer than {MAX_SOURCE_BYTES} bytes");
            return Err(ExprError::new(column, msg));
        }
        Ok(Expression {
            root: parser::parse(src)?,
            source: src.to_owned(),
        })
    }

    /// The expression `true`, for rules the crate builds itself (the keyed
    /// API's quotas).
    pub(crate) fn always_true() -> Expression {
        Expression {
            root: ast::Node::Const(true),
            source: "true".to_owned(),
        }
    }

    /// Whether the expression is the literal `true` (a site-wide rule),
    /// ignoring surrounding whitespace and parentheses.
    ///
    /// Only the literal counts: `not false` or `true or …` are not it.
    pub fn is_always_true(&self) -> bool {
        matches!(self.root, ast::Node::Const(true))
    }

    /// Whether `req` matches.
    pub fn matches(&self, req: &dyn RequestView) -> bool {
        eval::eval(&self.root, req, false)
    }

    /// Whether `req` matches, with verified claims read as missing when
    /// `jwt_off` (the limiter's "ignore JWT" switch, as for keys and allow
    /// lists).
    pub(crate) fn matches_with(&self, req: &dyn RequestView, jwt_off: bool) -> bool {
        eval::eval(&self.root, req, jwt_off)
    }

    /// Adds to `out` the (lower-case) names of the request headers this
    /// expression reads, so that callers can copy only those.
    pub fn headers_used(&self, out: &mut Vec<String>) {
        self.root.headers_used(out);
    }

    /// The paths a request must have to match, when the expression pins
    /// `http.request.uri.path` with `eq` or `in` (alone or as an `and`
    /// term); `None` when any path can match.
    pub(crate) fn pinned_paths(&self) -> Option<Vec<&str>> {
        self.root.pinned(&ast::StrField::Path)
    }

    /// The text the expression was parsed from, as given.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl fmt::Display for Expression {
    /// Writes the source text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Two expressions are equal when their source texts are: the same text
/// always parses to the same tree.
impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Expression {}

impl FromStr for Expression {
    type Err = ExprError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expression::parse(s)
    }
}

#[cfg(test)]
mod pattern_gen;
#[cfg(test)]
mod tests;
