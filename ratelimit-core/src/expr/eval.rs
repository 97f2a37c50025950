//! Evaluates a parsed tree against one request.
//!
//! Field values are borrowed from the request whenever possible: a path, host
//! or valid UTF-8 header is compared in place. Only a header with invalid
//! UTF-8 (compared lossily), several `Cookie` headers (joined with `"; "`) and
//! `lower(…)` of a value that has upper-case letters build a new string.

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::ast::{IpTest, Node, StrField, StrOp, StrTest};
use crate::RequestView;

/// Whether `node` holds for `req`. With `jwt_off` (the emergency switch)
/// verified claims read as missing.
pub(super) fn eval(node: &Node, req: &dyn RequestView, jwt_off: bool) -> bool {
    match node {
        Node::Const(b) => *b,
        Node::Not(inner) => !eval(inner, req, jwt_off),
        Node::And(items) => items.iter().all(|n| eval(n, req, jwt_off)),
        Node::Or(items) => items.iter().any(|n| eval(n, req, jwt_off)),
        Node::Str(test) => eval_str(test, req, jwt_off),
        Node::Ip(test) => eval_ip(test, req),
    }
}

fn eval_ip(test: &IpTest, req: &dyn RequestView) -> bool {
    let client = req.client_ip().to_canonical();
    match test {
        IpTest::Eq(addr) => client == *addr,
        IpTest::Ne(addr) => client != *addr,
        IpTest::In(set) => set.contains(client),
    }
}

fn eval_str(test: &StrTest, req: &dyn RequestView, jwt_off: bool) -> bool {
    let value = field_value(&test.subject.field, req, jwt_off);
    let value = if test.subject.lower {
        lowered(value)
    } else {
        value
    };
    let v: &str = &value;
    match &test.op {
        StrOp::Eq(s) => v == s,
        StrOp::Ne(s) => v != s,
        StrOp::In(set) => set.binary_search_by(|item| item.as_str().cmp(v)).is_ok(),
        StrOp::Contains(s) => v.contains(s.as_str()),
        StrOp::Matches(re) => re.is_match(v),
        StrOp::StartsWith(s) => v.starts_with(s.as_str()),
        StrOp::EndsWith(s) => v.ends_with(s.as_str()),
    }
}

/// The value of a string field; a missing header, claim or application
/// value is the empty string.
fn field_value<'r>(field: &StrField, req: &'r dyn RequestView, jwt_off: bool) -> Cow<'r, str> {
    match field {
        StrField::Path => Cow::Borrowed(req.path()),
        StrField::Query => Cow::Borrowed(req.query()),
        StrField::Method => Cow::Borrowed(req.method()),
        StrField::Host => Cow::Borrowed(req.host()),
        StrField::UserAgent => header_text(req, "user-agent"),
        StrField::Header(name) => header_text(req, name),
        StrField::Cookie => cookie_text(req),
        StrField::GrpcService => Cow::Borrowed(grpc_names(req.path()).0),
        StrField::GrpcMethod => Cow::Borrowed(grpc_names(req.path()).1),
        StrField::Claim(_) if jwt_off => Cow::Borrowed(""),
        StrField::Claim(name) => Cow::Borrowed(req.jwt_claim(name).unwrap_or("")),
        StrField::App(name) => Cow::Borrowed(req.app_value(name).unwrap_or("")),
    }
}

/// The service and the method a gRPC path names: `/package.Service/Method`
/// is `("package.Service", "Method")`; a path of another shape (not two
/// non-empty segments) names neither, `("", "")`.
fn grpc_names(path: &str) -> (&str, &str) {
    let names = path.strip_prefix('/').and_then(|rest| rest.split_once('/'));
    match names {
        Some((service, method))
            if !service.is_empty() && !method.is_empty() && !method.contains('/') =>
        {
            (service, method)
        }
        _ => ("", ""),
    }
}

/// The first value of header `name`, lossily decoded.
fn header_text<'r>(req: &'r dyn RequestView, name: &str) -> Cow<'r, str> {
    req.header(name)
        .map_or(Cow::Borrowed(""), String::from_utf8_lossy)
}

/// Every `Cookie` header, joined with `"; "`.
fn cookie_text(req: &dyn RequestView) -> Cow<'_, str> {
    let mut text = Cow::Borrowed("");
    let mut first = true;
    req.for_each_header_value("cookie", &mut |line| {
        let line = String::from_utf8_lossy(line);
        if first {
            text = line;
            first = false;
        } else {
            let joined = text.to_mut();
            joined.push_str("; ");
            joined.push_str(&line);
        }
        ControlFlow::Continue(())
    });
    text
}

/// `value` in lower case, borrowed when it already is.
fn lowered(value: Cow<'_, str>) -> Cow<'_, str> {
    let unchanged = |c: char| {
        let mut lower = c.to_lowercase();
        lower.next() == Some(c) && lower.next().is_none()
    };
    if value.chars().all(unchanged) {
        value
    } else {
        Cow::Owned(value.to_lowercase())
    }
}

#[cfg(test)]
mod tests;
