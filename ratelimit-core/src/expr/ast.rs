//! The syntax tree of a parsed expression and the table of fields.
//!
//! The tree is shallow by construction: `and` and `or` chains are flat lists,
//! parentheses add no node, and the parser bounds the nesting of `not`,
//! parentheses and function calls, so evaluating, cloning and dropping a tree
//! never recurses deeply.

use std::net::IpAddr;

use super::pattern::Pattern;
use crate::cidr::IpSet;

/// A boolean node.
#[derive(Debug, Clone)]
pub(super) enum Node {
    /// `true` or `false`.
    Const(bool),
    /// `not x`, `!x`.
    Not(Box<Node>),
    /// `a and b and …`, evaluated left to right, short-circuiting.
    And(Vec<Node>),
    /// `a or b or …`, evaluated left to right, short-circuiting.
    Or(Vec<Node>),
    /// A test on a string field.
    Str(StrTest),
    /// A test on `ip.src`.
    Ip(IpTest),
}

/// A string field, optionally lower-cased, and the test applied to it.
impl Node {
    /// Adds the names of the headers this node reads to `out`.
    pub(super) fn headers_used(&self, out: &mut Vec<String>) {
        match self {
            Node::Const(_) | Node::Ip(_) => {}
            Node::Not(n) => n.headers_used(out),
            Node::And(v) | Node::Or(v) => v.iter().for_each(|n| n.headers_used(out)),
            Node::Str(t) => match &t.subject.field {
                StrField::UserAgent => out.push("user-agent".to_owned()),
                StrField::Cookie => out.push("cookie".to_owned()),
                StrField::Header(n) => out.push(n.clone()),
                StrField::Path
                | StrField::Query
                | StrField::Method
                | StrField::Host
                | StrField::GrpcService
                | StrField::GrpcMethod
                | StrField::Claim(_)
                | StrField::App(_) => {}
            },
        }
    }
}

impl Node {
    /// Whether evaluating this node may run a regular expression. The
    /// nesting is bounded by the parser.
    pub(super) fn runs_a_regex(&self) -> bool {
        match self {
            Node::Str(t) => matches!(t.op, StrOp::Matches(_)),
            Node::Not(n) => n.runs_a_regex(),
            Node::And(v) | Node::Or(v) => v.iter().any(Node::runs_a_regex),
            Node::Const(_) | Node::Ip(_) => false,
        }
    }

    /// The values `field` (not lower-cased) must have for this node to
    /// match, when an `eq` or `in` on it is the node or one of its `and`
    /// terms; `None` when the node does not pin the field.
    pub(super) fn pinned(&self, field: &StrField) -> Option<Vec<&str>> {
        match self {
            Node::Str(t) if t.subject.field == *field && !t.subject.lower => match &t.op {
                StrOp::Eq(v) => Some(vec![v.as_str()]),
                StrOp::In(v) => Some(v.iter().map(String::as_str).collect()),
                _ => None,
            },
            Node::And(terms) => terms.iter().find_map(|n| n.pinned(field)),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct StrTest {
    pub(super) subject: Subject,
    pub(super) op: StrOp,
}

/// The left side of a string test: a field, maybe inside `lower(…)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Subject {
    pub(super) field: StrField,
    pub(super) lower: bool,
}

/// A field whose value is a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum StrField {
    /// `http.request.uri.path`
    Path,
    /// `http.request.uri.query`
    Query,
    /// `http.request.method`
    Method,
    /// `http.host`
    Host,
    /// `http.user_agent`
    UserAgent,
    /// `http.cookie`
    Cookie,
    /// `grpc.service`: `package.Service` of a `/package.Service/Method` path.
    GrpcService,
    /// `grpc.method`: `Method` of a `/package.Service/Method` path.
    GrpcMethod,
    /// `http.request.headers["name"]`; the name is lower-cased.
    Header(String),
    /// `http.request.jwt.claims["name"]` (or `…[0]`): a verified claim.
    Claim(String),
    /// `app.name` or `app["name"]`: a value the application supplied.
    App(String),
}

/// A test on a string value.
#[derive(Debug, Clone)]
pub(super) enum StrOp {
    /// `eq`, `==`
    Eq(String),
    /// `ne`, `!=`
    Ne(String),
    /// `in { … }`; sorted, without repeats, for binary search.
    In(Vec<String>),
    /// `contains`
    Contains(String),
    /// `matches`; an unanchored search.
    Matches(Pattern),
    /// `starts_with(field, "x")`
    StartsWith(String),
    /// `ends_with(field, "x")`
    EndsWith(String),
}

/// A test on the client address; addresses are in canonical form (an
/// IPv4-mapped IPv6 address is stored as the IPv4 address).
#[derive(Debug, Clone)]
pub(super) enum IpTest {
    /// `ip.src eq 192.0.2.1`
    Eq(IpAddr),
    /// `ip.src ne 192.0.2.1`
    Ne(IpAddr),
    /// `ip.src in { 10.0.0.0/8 … }`
    In(IpSet),
}

/// What a field name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FieldKind {
    /// A plain string field.
    Str(StrField),
    /// `ip.src`.
    Ip,
    /// `http.request.headers`, which must be followed by `["name"]`.
    Headers,
    /// `http.request.jwt.claims`, which must be followed by `["name"]`.
    Claims,
    /// `app`, which must be followed by `["name"]`.
    App,
}

/// The name of the header map field.
pub(super) const HEADERS_FIELD: &str = "http.request.headers";

/// The name of the verified claims' map field.
pub(super) const CLAIMS_FIELD: &str = "http.request.jwt.claims";

/// Every field name [`lookup_field`] knows, for "did you mean".
pub(super) const FIELD_NAMES: [&str; 10] = [
    "http.request.uri.path",
    "http.request.uri.query",
    "http.request.method",
    "http.host",
    "http.user_agent",
    "http.cookie",
    "ip.src",
    HEADERS_FIELD,
    CLAIMS_FIELD,
    "app",
];

/// Looks a field up by its exact name (`app.NAME` is parsed apart).
pub(super) fn lookup_field(name: &str) -> Option<FieldKind> {
    Some(match name {
        "http.request.uri.path" => FieldKind::Str(StrField::Path),
        "http.request.uri.query" => FieldKind::Str(StrField::Query),
        "http.request.method" => FieldKind::Str(StrField::Method),
        "http.host" => FieldKind::Str(StrField::Host),
        "http.user_agent" => FieldKind::Str(StrField::UserAgent),
        "http.cookie" => FieldKind::Str(StrField::Cookie),
        "grpc.service" => FieldKind::Str(StrField::GrpcService),
        "grpc.method" => FieldKind::Str(StrField::GrpcMethod),
        "ip.src" => FieldKind::Ip,
        HEADERS_FIELD => FieldKind::Headers,
        CLAIMS_FIELD => FieldKind::Claims,
        "app" => FieldKind::App,
        _ => return None,
    })
}

/// Whether `name` is usable as a header name: a non-empty HTTP token.
pub(super) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Words with a meaning of their own, which cannot start a condition.
pub(super) fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "and" | "or" | "not" | "eq" | "ne" | "in" | "contains" | "matches"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_field_is_known() {
        for name in [
            "http.request.uri.path",
            "http.request.uri.query",
            "http.request.method",
            "http.host",
            "http.user_agent",
            "http.cookie",
            "grpc.service",
            "grpc.method",
            "ip.src",
            "http.request.headers",
        ] {
            assert!(lookup_field(name).is_some(), "{name}");
        }
        for name in FIELD_NAMES {
            assert!(lookup_field(name).is_some(), "{name}");
        }
        assert!(lookup_field("http.request.uri").is_none());
        assert!(lookup_field("HTTP.HOST").is_none());
    }

    #[test]
    fn header_names_must_be_http_tokens() {
        assert!(is_header_name("x-api-key"));
        assert!(!is_header_name(""));
        assert!(!is_header_name("x api"));
        assert!(!is_header_name("x:y"));
    }
}
