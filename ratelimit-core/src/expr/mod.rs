//! Match expressions: a documented subset of the Cloudflare rules language.
//!
//! Temporary stand-in (only `true`, `false` and `http.request.uri.path eq
//! "x"`); the full parser lands with the expression work.

use crate::RequestAttrs;
use std::fmt;

/// A parsed match expression.
#[derive(Debug, Clone)]
pub struct Expression {
    src: String,
    path: Option<String>,
    value: bool,
}

/// A parse error, with the column where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    column: usize,
    message: String,
}

impl ExprError {
    /// 1-based column.
    pub fn column(&self) -> usize {
        self.column
    }
    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ExprError {}

impl Expression {
    /// Parses `src`.
    pub fn parse(src: &str) -> Result<Expression, ExprError> {
        let t = src.trim();
        let (path, value) = match t {
            "true" => (None, true),
            "false" => (None, false),
            _ => match t.strip_prefix("http.request.uri.path eq \"") {
                Some(rest) if rest.ends_with('"') => {
                    (Some(rest[..rest.len() - 1].to_owned()), false)
                }
                _ => {
                    return Err(ExprError {
                        column: 1,
                        message: "unsupported expression".into(),
                    })
                }
            },
        };
        Ok(Expression {
            src: src.to_owned(),
            path,
            value,
        })
    }
    /// Whether this is the literal `true`.
    pub fn is_always_true(&self) -> bool {
        self.path.is_none() && self.value
    }
    /// Whether `req` matches.
    pub fn matches(&self, req: &RequestAttrs) -> bool {
        match &self.path {
            Some(p) => req.path == *p,
            None => self.value,
        }
    }
    /// The source text.
    pub fn source(&self) -> &str {
        &self.src
    }
}
