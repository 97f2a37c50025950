//! `http.host`: which host a request is for, normalized.

use std::borrow::Cow;

use http::header::HOST;
use http::uri::Authority;
use http::{HeaderMap, HeaderValue};

/// The request's host, lower-cased, without port and without one trailing
/// dot, from the request target's `authority` or else `headers`. The
/// target's authority (absolute form, HTTP/2's `:authority`) wins over the
/// `Host` header, as RFC 9112 section 3.2.2 says; invalid UTF-8 is decoded
/// lossily. Borrowed from the request unless it has upper-case letters or
/// is not UTF-8.
pub(super) fn host<'r>(authority: Option<&'r Authority>, headers: &'r HeaderMap) -> Cow<'r, str> {
    if let Some(authority) = authority {
        return normalize(authority.as_str());
    }
    // `from_utf8` first: the lossy decoder's chunk walk costs more for the
    // usual valid host.
    let raw = host_header(headers)
        .map(|v| match std::str::from_utf8(v.as_bytes()) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(v.as_bytes()),
        })
        .unwrap_or_default();
    match raw {
        Cow::Borrowed(raw) => normalize(raw),
        Cow::Owned(raw) => Cow::Owned(normalize(&raw).into_owned()),
    }
}

/// At least the length of [`host`], without reading it: normalizing only
/// cuts (an authority is ASCII); decoding a header lossily turns a bad byte
/// into at most 3.
#[inline]
pub(super) fn longest(authority: Option<&Authority>, headers: &HeaderMap) -> usize {
    match authority {
        Some(authority) => authority.as_str().len(),
        None => host_header(headers).map_or(0, |v| v.len().saturating_mul(3)),
    }
}

/// The (first) `Host` header. HTTP/1.1 clients send it first and the map
/// keeps the order of arrival, so a look at the first entry mostly spares
/// the lookup (about 100 instructions of a request's few thousand).
fn host_header(headers: &HeaderMap) -> Option<&HeaderValue> {
    match headers.iter().next() {
        // All the values of a name are in its entry, the first one first.
        Some((name, value)) if *name == HOST => Some(value),
        Some(_) => headers.get(HOST),
        None => None,
    }
}

/// `user@API.Example.com.:8080` → `api.example.com`; `[2001:DB8::1]:443`
/// → `2001:db8::1`.
pub(super) fn normalize(raw: &str) -> Cow<'_, str> {
    match usual(raw) {
        Some(host) => Cow::Borrowed(host),
        None => slow(raw),
    }
}

/// Any host: see [`normalize`].
fn slow(raw: &str) -> Cow<'_, str> {
    // Byte positions of ASCII delimiters are character boundaries: the
    // same cuts as `rsplit_once('@')`, `split_once(']')` and
    // `rsplit_once(':')`, without the general pattern search.
    let raw = raw.trim();
    let bytes = raw.as_bytes();
    let start = bytes.iter().rposition(|&b| b == b'@').map_or(0, |i| i + 1);
    let raw = &raw[start..];
    let bytes = raw.as_bytes();
    let without_port = match bytes.first() {
        Some(b'[') => match bytes.iter().position(|&b| b == b']') {
            Some(end) => &raw[1..end],
            None => raw,
        },
        _ => match bytes.iter().rposition(|&b| b == b':') {
            Some(colon) if bytes[colon + 1..].iter().all(u8::is_ascii_digit) => &raw[..colon],
            _ => raw,
        },
    };
    let host = without_port.strip_suffix('.').unwrap_or(without_port);
    match host.bytes().any(|b| b.is_ascii_uppercase()) {
        true => Cow::Owned(host.to_ascii_lowercase()),
        false => Cow::Borrowed(host),
    }
}

/// The usual host, in one pass: lower-case letters, digits, `-` and `.`,
/// then maybe `:` and a port of digits (no blank, `@`, brackets, upper
/// case); the name without the port and one trailing dot, as `normalize`
/// reads it. `None` for anything else.
fn usual(raw: &str) -> Option<&str> {
    let bytes = raw.as_bytes();
    let name = bytes
        .iter()
        .position(|&b| !NAME_BYTE[usize::from(b)])
        .unwrap_or(bytes.len());
    if let Some((&colon, port)) = bytes.get(name..).and_then(<[u8]>::split_first) {
        if colon != b':' || !port.iter().all(u8::is_ascii_digit) {
            return None;
        }
    }
    let host = raw.get(..name)?;
    Some(host.strip_suffix('.').unwrap_or(host))
}

/// The bytes of a usual host name: lower-case letters, digits, `-`, `.`.
const NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.';
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests;
