//! gRPC answers: every answer the layer makes, as a gRPC client reads it.
//!
//! A request whose `content-type` is `application/grpc` (or
//! `application/grpc+proto`, `application/grpc;…`) gets the layer's answers
//! as trailers-only gRPC responses: HTTP 200, `content-type:
//! application/grpc`, no body, and in the headers
//!
//! - `grpc-status`, mapped from the HTTP answer (table below);
//! - `grpc-message`, percent-encoded as gRPC requires;
//! - the headers the HTTP answer carries, as metadata: `retry-after`,
//!   `ratelimit-policy`, `ratelimit` (and the legacy ones when on);
//! - on a limited or unavailable answer, `grpc-retry-pushback-ms` (gRPC's
//!   retry design, A6: a client retry policy waits that long), and with the
//!   `tonic` feature a `grpc-status-details-bin` carrying a `google.rpc.Status`
//!   whose details hold a `google.rpc.RetryInfo` (what `tonic-types` reads as
//!   rich error details).
//!
//! | answer | HTTP | gRPC |
//! | --- | --- | --- |
//! | limited | 429 | `RESOURCE_EXHAUSTED` (8), or `UNAVAILABLE` (14) with [`LimitedCode::Unavailable`] |
//! | fail closed / backend unavailable | 503 | `UNAVAILABLE` (14) |
//! | key missing, `on_missing_key: reject` | 400 | `INVALID_ARGUMENT` (3) |
//! | no client address | 500 | `INTERNAL` (13), the message naming the fix |
//! | path / metadata too large for the rules | 414 / 431 | `INVALID_ARGUMENT` (3) |
//!
//! A trailers-only answer fails a streaming call at the call (tonic's
//! `watch().await` returns the error), not at its first message. Plain HTTP
//! requests on the same server keep their HTTP answers. The answer is built
//! by the [`MakeResponse`](crate::MakeResponse) first, then mapped by its
//! HTTP status; an answer that already carries `grpc-status` is left as
//! the `MakeResponse` made it. The guide's gRPC chapter says why each code.

use std::borrow::Cow;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode};

#[cfg(feature = "tonic")]
mod details;

/// `grpc-status`.
pub const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
/// `grpc-message`.
pub const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");
/// `grpc-retry-pushback-ms`.
pub const GRPC_RETRY_PUSHBACK_MS: HeaderName = HeaderName::from_static("grpc-retry-pushback-ms");
/// `grpc-status-details-bin`.
pub const GRPC_STATUS_DETAILS_BIN: HeaderName = HeaderName::from_static("grpc-status-details-bin");

/// The gRPC status of a limited call
/// ([`RateLimitLayer::grpc_limited_code`](crate::RateLimitLayer::grpc_limited_code)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitedCode {
    /// `RESOURCE_EXHAUSTED` (8), the default: what gRPC calls a quota
    /// running out. A client retries it only when its retry policy lists
    /// it, and then after the pushback.
    #[default]
    ResourceExhausted,
    /// `UNAVAILABLE` (14): for clients whose retry policies retry only
    /// that code (they wait the pushback first).
    Unavailable,
}

impl LimitedCode {
    fn code(self) -> u8 {
        match self {
            Self::ResourceExhausted => 8,
            Self::Unavailable => 14,
        }
    }
}

/// Whether a request with these headers is a gRPC call: its `content-type`
/// is `application/grpc`, alone or followed by `+` or `;`.
#[inline]
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    const GRPC: &[u8] = b"application/grpc";
    let Some(ct) = headers.get(CONTENT_TYPE) else {
        return false;
    };
    let ct = ct.as_bytes();
    ct.len() >= GRPC.len()
        && ct[..GRPC.len()].eq_ignore_ascii_case(GRPC)
        && matches!(ct.get(GRPC.len()), None | Some(b'+' | b';'))
}

/// The HTTP answer `res` (the `MakeResponse`'s, with the rate-limit
/// headers) as a trailers-only gRPC response; `pushback_ms` for a limited
/// or unavailable answer.
pub(crate) fn to_grpc(
    res: Response<Bytes>,
    pushback_ms: Option<u64>,
    limited: LimitedCode,
) -> Response<Bytes> {
    if res.headers().contains_key(GRPC_STATUS) {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let code = code_for(parts.status, limited);
    let message = message_for(parts.status, &parts.headers, &body);
    parts.status = StatusCode::OK;
    let headers = &mut parts.headers;
    headers.remove(CONTENT_LENGTH);
    headers.reserve(4);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    headers.insert(
        GRPC_STATUS,
        HeaderValue::from_static(CODES[usize::from(code)]),
    );
    let encoded = match message {
        // The layer's own texts: printable ASCII without `%`.
        Cow::Borrowed(text) => HeaderValue::from_static(text),
        Cow::Owned(ref text) => percent_encode(text),
    };
    headers.insert(GRPC_MESSAGE, encoded);
    if let Some(ms) = pushback_ms {
        headers.insert(GRPC_RETRY_PUSHBACK_MS, HeaderValue::from(ms));
        #[cfg(feature = "tonic")]
        headers.insert(
            GRPC_STATUS_DETAILS_BIN,
            details::retry_info(code, &message, ms),
        );
    }
    Response::from_parts(parts, Bytes::new())
}

/// The status `count_statuses` rules count for the inner service's
/// response: its HTTP status, or for a trailers-only gRPC answer (its
/// `grpc-status` in the head, as tonic answers a unary call's error) the
/// HTTP status `google.rpc.Code` maps the code to: `NOT_FOUND` counts as
/// 404, `INTERNAL` as 500. A status sent in trailers after messages is not
/// seen: the call counts as its HTTP 200.
#[inline]
pub(crate) fn counted_status<B>(res: &Response<B>) -> u16 {
    let status = res.status().as_u16();
    if status != 200 {
        return status;
    }
    let code = res.headers().get(GRPC_STATUS).map(HeaderValue::as_bytes);
    match code {
        Some(code) => http_status_of(code),
        None => status,
    }
}

/// `google.rpc.Code`'s HTTP mapping of a `grpc-status` value.
fn http_status_of(code: &[u8]) -> u16 {
    match code {
        b"0" => 200,
        b"1" => 499,
        b"3" | b"9" | b"11" => 400,
        b"4" => 504,
        b"5" => 404,
        b"6" | b"10" => 409,
        b"7" => 403,
        b"8" => 429,
        b"12" => 501,
        b"14" => 503,
        b"16" => 401,
        _ => 500,
    }
}

/// The gRPC status code of an HTTP answer: the layer's own (table in the
/// module docs), then gRPC's mapping of HTTP statuses for the others a
/// `MakeResponse` may answer.
fn code_for(status: StatusCode, limited: LimitedCode) -> u8 {
    match status.as_u16() {
        429 => limited.code(),
        // INVALID_ARGUMENT: the request itself is wrong, and the same
        // request never passes: no retry policy retries it.
        400 | 414 | 431 => 3,
        401 => 16,
        403 => 7,
        404 => 12,
        500 => 13,
        502..=504 => 14,
        _ => 2,
    }
}

/// The `grpc-status` values, by code.
const CODES: [&str; 17] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
];

/// The `grpc-message` of an HTTP answer: a `text/plain` body as it is (the
/// missing address names the fix there), otherwise a short text per status
/// (borrowed: printable ASCII without `%`, sent as it is).
fn message_for(status: StatusCode, headers: &HeaderMap, body: &Bytes) -> Cow<'static, str> {
    let text = headers
        .get(CONTENT_TYPE)
        .is_some_and(|ct| ct.as_bytes().starts_with(b"text/plain"));
    if text && !body.is_empty() {
        let end = body.len().min(MAX_MESSAGE);
        return Cow::Owned(String::from_utf8_lossy(&body[..end]).trim().to_owned());
    }
    Cow::Borrowed(match status.as_u16() {
        429 => "rate limited",
        503 => "rate limiter unavailable",
        400 => "bad request: a value the rate limit rules key on is missing",
        414 => "request path too long for the rate limit rules",
        431 => "request metadata too large for the rate limit rules",
        // Another crate's text: encoded like a body's.
        _ => return Cow::Owned(status.canonical_reason().unwrap_or("").to_owned()),
    })
}

/// The longest `grpc-message` taken from a body, in bytes.
const MAX_MESSAGE: usize = 1024;

/// `message` percent-encoded for `grpc-message`: bytes outside printable
/// ASCII, and `%`, as `%XX`.
pub(crate) fn percent_encode(message: &str) -> HeaderValue {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(message.len());
    for &b in message.as_bytes() {
        if (0x20..=0x7e).contains(&b) && b != b'%' {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
    // Only printable ASCII is left: always a valid header value.
    HeaderValue::from_bytes(&out).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests;
