//! JSON lines: one object per line, its fields read where they lie (a
//! field's raw text first, then that text as the type the field needs), so
//! a well-formed line costs no allocation beyond its headers, and a bad
//! one names the field at fault.
//!
//! A line in the plain JSON most loggers write (no escapes, no arrays) is
//! read in one pass by [`scan`]; any other line by serde_json, which
//! decides what a line means whenever the two could differ.

mod fields;
mod scan;
mod serde_read;

use std::borrow::Cow;
use std::net::IpAddr;

use super::log::{split_target, LogError, LogLine};
use crate::TimeUnit;
use fields::{cased, float_ms, CowPairs, NO_TIME};
use serde_read::{read_fields, string_serde, strings_serde, time_serde};

/// A string field: borrowed unless it has escapes; `Err` when it is not a
/// string.
fn string(raw: &str) -> Result<Cow<'_, str>, ()> {
    // Without a backslash, a string's content is the text between its quotes.
    let plain = (raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
        .filter(|s| !s.bytes().any(|b| b == b'\\'));
    if let Some(s) = plain {
        return Ok(Cow::Borrowed(s));
    }
    string_serde(raw)
}

/// An object of strings, names in lower case (absent or `null`: none).
fn strings<'a>(raw: Option<&'a str>, what: &'static str) -> Result<CowPairs<'a>, LogError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(4);
    let plain = scan::pairs(raw, |k, v| {
        out.push((cased(Cow::Borrowed(k), false), Cow::Borrowed(v)));
    });
    match plain {
        Some(()) => Ok(out),
        None => strings_serde(raw, what),
    }
}

/// A JSON-lines `time`: RFC 3339, or a Unix time in `unit`.
fn time(raw: Option<&str>, unit: TimeUnit) -> Result<u64, LogError> {
    let Some(raw) = raw else {
        return Err(LogError(NO_TIME));
    };
    let out_of_range = || LogError(crate::time::number_error(unit));
    // A whole number of at most 19 digits is a u64 as written (JSON has
    // no leading zero): read in place.
    if (1..=19).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_digit()) {
        return crate::time::epoch_ms(raw, unit).ok_or_else(out_of_range);
    }
    if let Some(f) = plain_decimal(raw) {
        return float_ms(f, unit).ok_or_else(out_of_range);
    }
    time_serde(raw, unit)
}

/// A number `digits.digits` of at most 15 digits as serde_json reads it:
/// the significand (exact, under 2^53) over a power of ten (exact), one
/// rounding, the correctly rounded value that both of serde_json's float
/// parsers give for it.
fn plain_decimal(raw: &str) -> Option<f64> {
    const POW10: [f64; 16] = [
        1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (mut significand, mut digits, mut point) = (0u64, 0, None);
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'0'..=b'9' if digits < 15 => {
                significand = significand * 10 + u64::from(b - b'0');
                digits += 1;
            }
            b'.' if point.is_none() && i > 0 => point = Some(i),
            _ => return None,
        }
    }
    let scale = raw.len() - point? - 1;
    (scale > 0).then(|| significand as f64 / POW10[scale])
}

/// Parses one JSON line.
pub(super) fn parse<'a>(line: &'a str, unit: TimeUnit) -> Result<LogLine<'a>, LogError> {
    if !line.trim_start().starts_with('{') {
        return Err(LogError("not a JSON object"));
    }
    let f = match scan::fields(line) {
        Some(f) => f,
        None => read_fields(line)?,
    };
    let text = |raw: Option<&'a str>| raw.and_then(|t| string(t).ok());
    let ip = text(f.ip).ok_or(LogError("no \"ip\" string"))?;
    let ip: IpAddr = ip.parse().map_err(|_| LogError("\"ip\" is not an IP"))?;
    let time_ms = time(f.time, unit)?;
    let target = text(f.path).ok_or(LogError("no \"path\" string"))?;
    if !target.starts_with('/') {
        return Err(LogError("\"path\" does not start with /"));
    }
    let (path, query) = match target {
        Cow::Borrowed(t) => {
            let (p, q) = split_target(t);
            (Cow::Borrowed(p), Cow::Borrowed(q))
        }
        Cow::Owned(t) => {
            let (p, q) = split_target(&t);
            (Cow::Owned(p.to_owned()), Cow::Owned(q.to_owned()))
        }
    };
    let query = text(f.query).unwrap_or(query);
    let mut headers = strings(f.headers, "\"headers\" is not an object of strings")?;
    if let Some(raw) = f.forwarded_for {
        let v = string(raw).map_err(|()| LogError("\"forwarded_for\" is not a string"))?;
        headers.push((Cow::Borrowed("x-forwarded-for"), v));
    }
    let claims = match f.claims {
        None => None,
        Some(_) => Some(
            strings(f.claims, "\"claims\" is not an object of strings")?
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ),
    };
    Ok(LogLine {
        ip: Some(ip),
        time_ms,
        method: cased(text(f.method).unwrap_or(Cow::Borrowed("GET")), true),
        path,
        query,
        host: cased(text(f.host).unwrap_or_default(), false),
        status: f
            .status
            .and_then(|t| t.parse::<u64>().ok())
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(0),
        headers,
        claims,
        app: strings(f.app, "\"app\" is not an object of strings")?
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
    })
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
