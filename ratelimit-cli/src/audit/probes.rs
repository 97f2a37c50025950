//! The requests the audit asks the rules about: each rule's own expression
//! decides whether it matches them (no keyword matching of rule text).

use std::collections::BTreeMap;

use ratelimit_core::rules::Rule;
use ratelimit_core::RequestAttrs;

/// Paths of login-like routes: a rule matching a `POST` to one of them
/// guards authentication.
pub(crate) const LOGIN_PATHS: [&str; 10] = [
    "/login",
    "/signin",
    "/sign-in",
    "/auth/login",
    "/users/sign_in",
    "/account/login",
    "/session",
    "/sessions",
    "/oauth/token",
    "/password/reset",
];

/// Paths of read routes.
pub(crate) const READ_PATHS: [&str; 5] =
    ["/", "/api/items", "/api/v1/items/42", "/search", "/health"];

/// A request without credentials.
fn anonymous(method: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new("203.0.113.7".parse().expect("a literal address"))
        .with_method(method)
        .with_host("example.com")
        .with_path(path)
        .with_header("x-user", "audit-user")
}

/// The same request with credentials: a bearer token and its verified
/// claims.
fn with_credentials(req: RequestAttrs) -> RequestAttrs {
    let mut claims = BTreeMap::new();
    claims.insert("sub".to_owned(), "audit-user".to_owned());
    claims.insert("plan".to_owned(), "free".to_owned());
    req.with_header("authorization", "Bearer audit")
        .with_jwt_claims(claims)
}

fn probe(method: &str, path: &str) -> RequestAttrs {
    with_credentials(anonymous(method, path))
}

/// The login probes: `POST` to each login path.
pub(crate) fn login() -> Vec<RequestAttrs> {
    LOGIN_PATHS.iter().map(|p| probe("POST", p)).collect()
}

/// The read probes: `GET` of each read path.
pub(crate) fn read() -> Vec<RequestAttrs> {
    READ_PATHS.iter().map(|p| probe("GET", p)).collect()
}

/// Every probe, login then read.
pub(crate) fn all() -> Vec<RequestAttrs> {
    let mut v = login();
    v.extend(read());
    v
}

/// Whether `rule` matches any of `probes`.
pub(crate) fn matches_any(rule: &Rule, probes: &[RequestAttrs]) -> bool {
    probes.iter().any(|p| rule.expression.matches(p))
}

/// Whether `rule`'s route needs credentials: it matches a probe that
/// carries a bearer token and verified claims, and not the same probe
/// without them.
pub(crate) fn needs_credentials(rule: &Rule) -> bool {
    LOGIN_PATHS
        .iter()
        .map(|p| ("POST", *p))
        .chain(READ_PATHS.iter().map(|p| ("GET", *p)))
        .any(|(m, p)| {
            let anon = anonymous(m, p);
            !rule.expression.matches(&anon) && rule.expression.matches(&with_credentials(anon))
        })
}
