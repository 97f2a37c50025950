//! Match expressions: a documented subset of the Cloudflare rules language.
//!
//! The `expression` of a rate-limit rule selects the requests the rule
//! counts. [`Expression::parse`] checks it once, when the rules load, and
//! [`Expression::matches`] tests a [`RequestAttrs`]
//! against it on every request.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{Expression, RequestAttrs};
//!
//! let expr = Expression::parse(
//!     r#"http.request.method in { "POST" "PUT" }
//!        and starts_with(http.request.uri.path, "/api/")
//!        and not ip.src in { 10.0.0.0/8 2001:db8::/32 }"#,
//! )?;
//! let req = RequestAttrs::new("203.0.113.7".parse()?)
//!     .with_method("POST")
//!     .with_path("/api/login");
//! assert!(expr.matches(&req));
//! assert!(!expr.matches(&req.clone().with_path("/login")));
//!
//! assert!(Expression::parse(" ( true ) ")?.is_always_true());
//!
//! let err = Expression::parse(r#"http.host eq "a" or http.path eq "/""#).unwrap_err();
//! assert_eq!(err.to_string(), "column 21: unknown field `http.path`");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Fields
//!
//! | Field | Value |
//! |---|---|
//! | `http.request.uri.path` | the path, without the query |
//! | `http.request.uri.query` | the raw query, without the `?`, not decoded |
//! | `http.request.method` | the method, such as `GET` (case-sensitive); see below for `HEAD` |
//! | `http.host` | the host, lower-cased, without the port and one trailing dot |
//! | `http.user_agent` | the first `User-Agent` header |
//! | `http.cookie` | every `Cookie` header, joined with `"; "` |
//! | `http.request.headers["name"]` | the first header called `name` (any case) |
//! | `ip.src` | the client address (an address, not a string) |
//!
//! Servers such as axum answer `HEAD` with the `GET` handler, so a limit on
//! `http.request.method eq "GET"` is bypassed by sending `HEAD`: match both
//! with `http.request.method in { "GET" "HEAD" }`.
//!
//! The tower layer takes `http.host` from the request target when it is in
//! absolute form (`GET http://api.example.com/ HTTP/1.1`, or HTTP/2's
//! `:authority`), as RFC 9112 says, otherwise from the `Host` header, and
//! normalizes it: `API.example.com.:8443` is `api.example.com`.
//!
//! A missing header is the empty string, so `http.request.headers["x-k"] eq ""`
//! holds when `x-k` is absent. Header bytes that are not UTF-8 are compared
//! after lossy decoding (each bad sequence becomes `U+FFFD`).
//!
//! # Operators
//!
//! | Operator | Meaning | Right side |
//! |---|---|---|
//! | `eq`, `==` | equal | a string; for `ip.src`, an address |
//! | `ne`, `!=` | not equal | a string; for `ip.src`, an address |
//! | `in` | one of | `{ "a" "b" }`; for `ip.src`, `{ 10.0.0.0/8 192.0.2.1 ::1 }` |
//! | `contains` | has as a substring | a string |
//! | `matches` | regular expression search (unanchored) | a string |
//! | `starts_with(f, "x")` | `f` begins with `x` | a condition on its own |
//! | `ends_with(f, "x")` | `f` ends with `x` | a condition on its own |
//! | `lower(f)` | `f` in lower case | usable wherever a string field is |
//!
//! | Logic | Meaning | Binds |
//! |---|---|---|
//! | `not`, `!` | negation | tightest |
//! | `and`, `&&` | both | |
//! | `or`, `\|\|` | either | loosest |
//!
//! `and` and `or` are left-associative and short-circuit; parentheses group.
//! `true` and `false` are conditions; `true` alone makes a site-wide rule
//! ([`Expression::is_always_true`]).
//!
//! # Values
//!
//! * Strings are in double quotes; `\"` and `\\` are the only escapes, and
//!   comparisons are exact and case-sensitive (use `lower(…)` on the field).
//! * In a set, values are separated by spaces, commas or both.
//! * Addresses and networks (CIDR) may be bare or quoted. An IPv4-mapped
//!   IPv6 address (`::ffff:192.0.2.1`) equals the IPv4 address; host bits
//!   after the prefix of a network are ignored. `eq` takes one address; use
//!   `in` for networks.
//! * `matches` uses the [`regex`] crate's syntax, close to RE2, with its
//!   Unicode classes (`\w`, `\d`, `\s` are Unicode unless written
//!   `(?-u:\w)`) and `(?i)` case folding. The pattern is compiled at parse
//!   time; at most 1000 characters, nested at most 64 deep (groups,
//!   repetitions, classes) and 1 MiB compiled. Since it runs on every
//!   request, its cost is bounded too: a counted repetition (`{n,m}`) asks
//!   for at most 64 copies, and the pattern with repetitions expanded,
//!   each class weighing by its size (Unicode `\w` about 100 times a
//!   literal), must stay under 1024; `\w{10,30}` is refused, `[A-Za-z0-9_]{10,30}`
//!   is not. In `and` / `or` chains, tests that run a pattern are evaluated
//!   after the others.
//!
//! # Limits
//!
//! An expression is at most 16 KiB, and `not`, parentheses and function calls
//! nest at most 64 deep. Every error names the 1-based column, in characters,
//! where the parser stopped.
//!
//! # Not supported
//!
//! Other fields and functions of the Cloudflare language, integer and boolean
//! fields, `lt`/`gt`-style operators, `xor`, wildcard operators, lists
//! (`$name`), and indexing such as `http.request.headers["x"][0]`.

mod ast;
mod error;
mod eval;
mod lexer;
mod operator;
mod parser;
mod regex_cost;
mod subject;

use std::fmt;
use std::str::FromStr;

pub use error::ExprError;

use crate::RequestAttrs;

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
    /// characters or too large compiled, or nesting deeper than 64 levels.
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
    pub fn matches(&self, req: &RequestAttrs) -> bool {
        eval::eval(&self.root, req)
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
mod proptests;
#[cfg(test)]
mod tests;
