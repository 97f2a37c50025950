//! Access log lines: nginx's `combined` format and JSON lines, parsed into
//! a [`LogLine`] that the limiter reads as a request ([`RequestView`]).
//!
//! Combined, as nginx writes it (`log_format combined`):
//!
//! ```text
//! 203.0.113.7 - - [01/Dec/2026:15:04:05 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8.5"
//! ```
//!
//! The referer and user agent are optional (the common log format); nginx's
//! stock `main` format adds `"$http_x_forwarded_for"` after the user agent,
//! read as the request's `X-Forwarded-For` header. JSON lines are objects
//! with `ip`, `time` (RFC 3339, or a Unix time in seconds, or milliseconds
//! with `--time-unit ms`, as a number or string), `method`, `path` (may
//! carry `?query`), and optionally `query`, `status`, `host`,
//! `forwarded_for` (the `X-Forwarded-For` header), `headers` (an object of
//! strings), `claims` (verified JWT claims) and `app` (application values).
//! A time before 1970 or past the year 9999 is a bad line whose reason
//! names the other unit.
//!
//! Hostile lines never panic: every slice is checked, and a line that
//! does not parse is a [`LogError`] naming what is wrong.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::ControlFlow;

use ratelimit_core::RequestView;

/// The longest line parsed: longer ones are refused.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// Why a line does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError(pub(super) &'static str);

impl LogError {
    /// The reason, a short sentence.
    pub fn reason(&self) -> &'static str {
        self.0
    }
}

impl std::error::Error for LogError {}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// One request of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogLine<'a> {
    /// The client address (the connection's peer, as logged).
    pub ip: Option<IpAddr>,
    /// When, in Unix milliseconds.
    pub time_ms: u64,
    /// The method.
    pub method: Cow<'a, str>,
    /// The path, without the query.
    pub path: Cow<'a, str>,
    /// The query, without the `?`.
    pub query: Cow<'a, str>,
    /// The host (JSON lines only).
    pub host: Cow<'a, str>,
    /// The response's status, 0 when unknown.
    pub status: u16,
    /// The request headers the log kept (lower-case names).
    pub headers: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// Verified claims (JSON lines only).
    pub claims: Option<BTreeMap<String, String>>,
    /// Application values (JSON lines only).
    pub app: Vec<(String, String)>,
}

/// The text up to `end`, and what follows it.
fn until(s: &str, end: char) -> Option<(&str, &str)> {
    let i = s.find(end)?;
    Some((&s[..i], &s[i + end.len_utf8()..]))
}

/// A quoted field: `"..."` (nginx escapes quotes inside as `\x22`).
fn quoted(s: &str) -> Option<(&str, &str)> {
    until(s.trim_start().strip_prefix('"')?, '"')
}

pub(super) fn split_target(target: &str) -> (&str, &str) {
    // A byte loop: a path is short, and `split_once`'s search is set up
    // for long texts.
    match target.bytes().position(|b| b == b'?') {
        Some(i) => (&target[..i], &target[i + 1..]),
        None => (target, ""),
    }
}

/// Parses one line of nginx's `combined` (or `main`) format.
pub(super) fn combined(line: &str) -> Result<LogLine<'_>, LogError> {
    let (ip, rest) = until(line, ' ').ok_or(LogError("no client address"))?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| LogError("the client address is not an IP"))?;
    let (_, rest) = until(rest, '[').ok_or(LogError("no [time]"))?;
    let (time, rest) = until(rest, ']').ok_or(LogError("no [time]"))?;
    let time_ms =
        crate::time::clf_ms(time).ok_or(LogError("the time is not dd/Mon/yyyy:hh:mm:ss +zzzz"))?;
    let (request, rest) = quoted(rest).ok_or(LogError("no \"request\""))?;
    let mut words = request.split(' ');
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(LogError("the request is not 'METHOD /target PROTOCOL'"));
    };
    if method.is_empty() || !target.starts_with('/') {
        return Err(LogError("the request is not 'METHOD /target PROTOCOL'"));
    }
    let mut tail = rest.trim_start().splitn(3, ' ');
    let status = tail
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or(LogError("no status"))?;
    let _bytes = tail.next();
    let mut headers = Vec::new();
    if let Some(rest) = tail.next() {
        let (referer, rest) = quoted(rest).ok_or(LogError("the referer is not quoted"))?;
        let (agent, rest) = quoted(rest).ok_or(LogError("the user agent is not quoted"))?;
        // nginx's `main` format: "$http_x_forwarded_for" follows.
        let forwarded = quoted(rest).map_or("-", |(f, _)| f);
        for (name, v) in [
            ("referer", referer),
            ("user-agent", agent),
            ("x-forwarded-for", forwarded),
        ] {
            if v != "-" {
                headers.push((Cow::Borrowed(name), Cow::Borrowed(v)));
            }
        }
    }
    let (path, query) = split_target(target);
    Ok(LogLine {
        ip: Some(ip),
        time_ms,
        method: Cow::Borrowed(method),
        path: Cow::Borrowed(path),
        query: Cow::Borrowed(query),
        status,
        headers,
        ..LogLine::default()
    })
}

impl RequestView for LogLine<'_> {
    fn client_ip(&self) -> IpAddr {
        self.ip
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
    }
    fn method(&self) -> &str {
        &self.method
    }
    fn host(&self) -> &str {
        &self.host
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn query(&self) -> &str {
        &self.query
    }
    fn header(&self, name: &str) -> Option<&[u8]> {
        (self.headers.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_bytes())
    }
    fn for_each_header_value<'a>(
        &'a self,
        name: &str,
        each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
    ) {
        for (n, v) in &self.headers {
            if n == name && each(v.as_bytes()).is_break() {
                return;
            }
        }
    }
    fn jwt_claim(&self, name: &str) -> Option<&str> {
        self.claims.as_ref()?.get(name).map(String::as_str)
    }
    fn app_value(&self, name: &str) -> Option<&str> {
        (self.app.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests;
