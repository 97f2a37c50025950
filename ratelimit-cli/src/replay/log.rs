//! Access log lines: nginx's `combined` format and JSON lines, parsed into
//! a [`LogLine`] that the limiter reads as a request ([`RequestView`]).
//!
//! Combined, as nginx writes it (`log_format combined`):
//!
//! ```text
//! 203.0.113.7 - - [01/Dec/2026:15:04:05 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8.5"
//! ```
//!
//! The referer and user agent are optional (the common log format). JSON
//! lines are objects with `ip`, `time` (RFC 3339, or Unix seconds as a
//! number or string), `method`, `path` (may carry `?query`), and optionally
//! `query`, `status`, `host`, `headers` (an object of strings), `claims`
//! (verified JWT claims) and `app` (application values).
//!
//! Hostile lines never panic: every slice is checked, and a line that
//! does not parse is a [`LogError`] naming what is wrong.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::ControlFlow;

use ratelimit_core::RequestView;
use serde_json::Value;

/// The longest line parsed: longer ones are refused.
pub const MAX_LINE: usize = 64 * 1024;

/// Which format the log is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// nginx's `combined` (or the common log format).
    Combined,
    /// One JSON object per line.
    Json,
}

/// Why a line does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError(pub &'static str);

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// One request of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogLine<'a> {
    /// The client address.
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

/// Parses one line in `format`.
///
/// # Errors
///
/// The line is too long or does not parse.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::replay::log::{parse, LogFormat};
/// let l = parse(r#"203.0.113.7 - - [01/Jan/1970:00:00:02 +0000] "POST /login?x=1 HTTP/1.1" 401 12 "-" "curl/8.5""#,
///     LogFormat::Combined).unwrap();
/// assert_eq!((l.time_ms, &*l.method, &*l.path, &*l.query, l.status), (2000, "POST", "/login", "x=1", 401));
/// assert!(parse("garbage", LogFormat::Combined).is_err());
/// ```
pub fn parse(line: &str, format: LogFormat) -> Result<LogLine<'_>, LogError> {
    if line.len() > MAX_LINE {
        return Err(LogError("line longer than 64 KiB"));
    }
    match format {
        LogFormat::Combined => combined(line),
        LogFormat::Json => json(line),
    }
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

fn split_target(target: &str) -> (&str, &str) {
    target.split_once('?').unwrap_or((target, ""))
}

fn combined(line: &str) -> Result<LogLine<'_>, LogError> {
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
        let (agent, _) = quoted(rest).ok_or(LogError("the user agent is not quoted"))?;
        for (name, v) in [("referer", referer), ("user-agent", agent)] {
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

fn strings(v: Option<&Value>, what: &'static str) -> Result<Vec<(String, String)>, LogError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let obj = v.as_object().ok_or(LogError(what))?;
    obj.iter()
        .map(|(k, v)| {
            Ok((
                k.to_ascii_lowercase(),
                v.as_str().ok_or(LogError(what))?.to_owned(),
            ))
        })
        .collect()
}

fn json(line: &str) -> Result<LogLine<'static>, LogError> {
    let v: Value = serde_json::from_str(line).map_err(|_| LogError("not a JSON object"))?;
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let ip = s("ip").ok_or(LogError("no \"ip\" string"))?;
    let ip: IpAddr = ip.parse().map_err(|_| LogError("\"ip\" is not an IP"))?;
    let time_ms = match v.get("time") {
        Some(Value::String(t)) => crate::time::rfc3339_ms(t).or_else(|| crate::time::epoch_ms(t)),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e13)
            .map(|f| (f * 1000.0) as u64),
        _ => None,
    }
    .ok_or(LogError("no \"time\" (RFC 3339 or Unix seconds)"))?;
    let target = s("path").ok_or(LogError("no \"path\" string"))?;
    if !target.starts_with('/') {
        return Err(LogError("\"path\" does not start with /"));
    }
    let (path, mut query) = split_target(target);
    if let Some(q) = s("query") {
        query = q;
    }
    let headers = strings(v.get("headers"), "\"headers\" is not an object of strings")?;
    let claims = match v.get("claims") {
        None | Some(Value::Null) => None,
        c => Some(
            strings(c, "\"claims\" is not an object of strings")?
                .into_iter()
                .collect(),
        ),
    };
    Ok(LogLine {
        ip: Some(ip),
        time_ms,
        method: Cow::Owned(s("method").unwrap_or("GET").to_ascii_uppercase()),
        path: Cow::Owned(path.to_owned()),
        query: Cow::Owned(query.to_owned()),
        host: Cow::Owned(s("host").unwrap_or("").to_ascii_lowercase()),
        status: v
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(0),
        headers: headers
            .into_iter()
            .map(|(k, v)| (Cow::Owned(k), Cow::Owned(v)))
            .collect(),
        claims,
        app: strings(v.get("app"), "\"app\" is not an object of strings")?,
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
