//! Request attributes, independent of any HTTP crate.
//!
//! Callers without an HTTP request (tests, the conformance runner, other
//! servers) build a [`RequestAttrs`] by hand; it implements
//! [`RequestView`](crate::RequestView), what the limiter reads. The tower
//! layer reads an `http::Request` through a borrowed view instead.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::RequestAttrs;
//!
//! let req = RequestAttrs::new("203.0.113.7".parse().unwrap())
//!     .with_method("POST")
//!     .with_path("/login")
//!     .with_query("a=1&a=2")
//!     .with_header("X-Tenant", "acme");
//! assert_eq!(req.header("x-tenant"), Some(&b"acme"[..]));
//! assert_eq!(req.query_arg("a").as_deref(), Some("1"));
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Everything the rules can look at in one request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestAttrs {
    /// The client address, after trusted-proxy selection.
    pub client_ip: IpAddr,
    /// The method, such as `GET`.
    pub method: String,
    /// The host, without port.
    pub host: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query string, without the `?`.
    pub query: String,
    /// Headers in arrival order, names lower-cased, repeats kept.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Claims of a verified token; `None` when no token verified.
    pub jwt_claims: Option<BTreeMap<String, String>>,
    /// Viewer country from a trusted header.
    pub country: Option<String>,
    /// Viewer autonomous system number from a trusted header.
    pub asnum: Option<String>,
    /// Viewer TLS fingerprint (JA4) from a trusted header.
    pub ja4: Option<String>,
    /// Viewer locale from a trusted header.
    pub locale: Option<String>,
    /// Values the application put on the request (`app:<name>` key parts).
    pub app_values: Vec<(String, String)>,
    /// What the application charges this request (every rule but
    /// `distinct`); `None` uses each rule's `cost` (1 unless set).
    pub cost: Option<u64>,
}

impl RequestAttrs {
    /// A `GET /` request to `example.com` from `client_ip`.
    pub fn new(client_ip: IpAddr) -> Self {
        Self {
            client_ip,
            method: "GET".to_owned(),
            host: "example.com".to_owned(),
            path: "/".to_owned(),
            query: String::new(),
            headers: Vec::new(),
            jwt_claims: None,
            country: None,
            asnum: None,
            ja4: None,
            locale: None,
            app_values: Vec::new(),
            cost: None,
        }
    }

    /// A request from `client_ip` with every field empty: for callers that
    /// fill each field themselves (no default strings allocated).
    pub fn blank(client_ip: IpAddr) -> Self {
        Self {
            client_ip,
            method: String::new(),
            host: String::new(),
            path: String::new(),
            query: String::new(),
            headers: Vec::new(),
            jwt_claims: None,
            country: None,
            asnum: None,
            ja4: None,
            locale: None,
            app_values: Vec::new(),
            cost: None,
        }
    }

    /// Sets the method.
    #[must_use]
    pub fn with_method(mut self, method: impl Into<String>) -> Self {
        self.method = method.into();
        self
    }

    /// Sets the host.
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Sets the path.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets the raw query string.
    #[must_use]
    pub fn with_query(mut self, query: impl Into<String>) -> Self {
        self.query = query.into();
        self
    }

    /// Appends a header (the name is lower-cased).
    #[must_use]
    pub fn with_header(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        self.headers
            .push((name.to_ascii_lowercase(), value.as_ref().to_vec()));
        self
    }

    /// Sets the claims of a verified token.
    #[must_use]
    pub fn with_jwt_claims(mut self, claims: BTreeMap<String, String>) -> Self {
        self.jwt_claims = Some(claims);
        self
    }

    /// Adds an application-supplied value, usable as the key part `app:<name>`.
    #[must_use]
    pub fn with_app_value(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.app_values.push((name.into(), value.into()));
        self
    }

    /// Charges this request `cost` under every rule but `distinct`.
    #[must_use]
    pub fn with_cost(mut self, cost: u64) -> Self {
        self.cost = Some(cost);
        self
    }

    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Every value of header `name` (lower-case), in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The first value of query argument `name`, percent-decoded.
    pub fn query_arg(&self, name: &str) -> Option<Cow<'_, str>> {
        query_arg_in(&self.query, name)
    }

    /// The first value of query argument `name`, percent-decoded to its
    /// bytes: values that are not UTF-8 once decoded (`%80`, `%81`) stay
    /// apart, as keys and distinct values need.
    pub fn query_arg_bytes(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        query_arg_bytes_in(&self.query, name)
    }

    /// The first cookie called `name`, over every `Cookie` header in order.
    pub fn cookie(&self, name: &str) -> Option<&[u8]> {
        self.header_values("cookie")
            .find_map(|line| cookie_in(line, name))
    }

    /// A verified JWT claim; `None` without a verified token.
    pub fn jwt_claim(&self, name: &str) -> Option<&str> {
        self.jwt_claims.as_ref()?.get(name).map(String::as_str)
    }

    /// An application-supplied value (first of that name).
    pub fn app_value(&self, name: &str) -> Option<&str> {
        self.app_values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The first value of query argument `name` in `query`, percent-decoded.
pub(crate) fn query_arg_in<'q>(query: &'q str, name: &str) -> Option<Cow<'q, str>> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode_bytes(k) == name.as_bytes()).then(|| percent_decode(v))
    })
}

/// The first value of query argument `name` in `query`, percent-decoded to
/// its bytes.
pub(crate) fn query_arg_bytes_in<'q>(query: &'q str, name: &str) -> Option<Cow<'q, [u8]>> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode_bytes(k) == name.as_bytes()).then(|| percent_decode_bytes(v))
    })
}

/// The cookie called `name` in one `Cookie` line.
pub(crate) fn cookie_in<'l>(line: &'l [u8], name: &str) -> Option<&'l [u8]> {
    line.split(|&b| b == b';').find_map(|pair| {
        let pair = trim(pair);
        let eq = pair.iter().position(|&b| b == b'=')?;
        (trim(&pair[..eq]) == name.as_bytes()).then(|| trim(&pair[eq + 1..]))
    })
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

/// Decodes `%XX` escapes and `+` as space; invalid escapes stay as they are.
pub(crate) fn percent_decode(s: &str) -> Cow<'_, str> {
    match percent_decode_bytes(s) {
        Cow::Borrowed(_) => Cow::Borrowed(s),
        Cow::Owned(out) => Cow::Owned(String::from_utf8_lossy(&out).into_owned()),
    }
}

/// Decodes `%XX` escapes and `+` as space to bytes, which need not be
/// UTF-8; invalid escapes stay as they are.
pub(crate) fn percent_decode_bytes(s: &str) -> Cow<'_, [u8]> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Cow::Borrowed(s.as_bytes());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && hex(bytes[i + 1]).is_some()
                && hex(bytes[i + 2]).is_some() =>
            {
                out.push(hex(bytes[i + 1]).unwrap_or(0) * 16 + hex(bytes[i + 2]).unwrap_or(0));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(out)
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests;
