//! `http.host`: which host a request is for, normalized.

use std::borrow::Cow;

use http::header::HOST;
use http::Request;

/// The request's host, lower-cased, without port and without one trailing
/// dot, and whether it came from the request target. The target's authority
/// (absolute form, HTTP/2's `:authority`) wins over the `Host` header, as
/// RFC 9112 section 3.2.2 says; invalid UTF-8 is decoded lossily. Borrowed
/// from the request unless it has upper-case letters or is not UTF-8.
pub(super) fn host<B>(req: &Request<B>) -> (Cow<'_, str>, bool) {
    if let Some(authority) = req.uri().authority() {
        return (normalize(authority.as_str()), true);
    }
    let raw = req
        .headers()
        .get(HOST)
        .map(|v| String::from_utf8_lossy(v.as_bytes()))
        .unwrap_or_default();
    let host = match raw {
        Cow::Borrowed(raw) => normalize(raw),
        Cow::Owned(raw) => Cow::Owned(normalize(&raw).into_owned()),
    };
    (host, false)
}

/// `user@API.Example.com.:8080` → `api.example.com`; `[2001:DB8::1]:443`
/// → `2001:db8::1`.
pub(super) fn normalize(raw: &str) -> Cow<'_, str> {
    let raw = raw.trim();
    let raw = raw.rsplit_once('@').map_or(raw, |(_, h)| h);
    let without_port = match raw.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(raw, |(h, _)| h),
        None => match raw.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => raw,
        },
    };
    let host = without_port.strip_suffix('.').unwrap_or(without_port);
    match host.bytes().any(|b| b.is_ascii_uppercase()) {
        true => Cow::Owned(host.to_ascii_lowercase()),
        false => Cow::Borrowed(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_normalized() {
        let cases = [
            ("api.example.com", "api.example.com"),
            ("API.Example.COM.", "api.example.com"),
            ("api.example.com.:8443", "api.example.com"),
            ("api.example.com..", "api.example.com."),
            ("user@api.example.com:80", "api.example.com"),
            ("[2001:DB8::1]:443", "2001:db8::1"),
            ("", ""),
            (".", ""),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize(raw), want, "{raw:?}");
        }
    }
}
