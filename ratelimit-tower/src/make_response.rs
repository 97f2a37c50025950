//! [`MakeResponse`] and its default [`JsonResponse`]: the layer's own
//! answers (429, 503, 400; 500 without a client address; 414, 431).

use std::cell::RefCell;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};
use ratelimit_core::{Outcome, Verdict};

use crate::TooLarge;

/// Builds the layer's own answers: to a request the limiter stops (any
/// outcome but forward: 429, 503 and 400), to a request without a client
/// address (500) and to one too large for the rules to read (414, 431).
///
/// [`JsonResponse`], the default, answers
///
/// | outcome | status | `Retry-After` | body |
/// | --- | --- | --- | --- |
/// | limited | 429 | whole seconds, rounded up | `{"error":"rate_limited","retry_after":N}` |
/// | backend unavailable (`fail_mode: closed`) | 503 | `1` | `{"error":"unavailable"}` |
/// | missing key with `on_missing_key: reject` | 400 | | `{"error":"bad_request"}` |
///
/// with `Content-Type: application/json`; [`MakeResponse::missing_peer`]
/// and [`MakeResponse::too_large`] answer the rest, before the limiter is
/// asked. The message stays generic on purpose: it never says how many
/// attempts are left.
///
/// For a gRPC request (`content-type: application/grpc*`) the layer then
/// turns whatever this answers into a trailers-only gRPC response, mapped
/// by its HTTP status (see [`grpc`](crate::grpc)); an answer that already
/// carries `grpc-status` is sent as it is.
///
/// Replace it with anything implementing this trait, such as a closure
/// `Fn(&Verdict) -> http::Response<Bytes>`. Whatever it answers, the layer
/// then adds `Retry-After` when missing and the `RateLimit-Policy` /
/// `RateLimit` headers (see [`headers`](crate::headers)).
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use ratelimit_core::{Outcome, Verdict};
/// use ratelimit_tower::RateLimitLayer;
///
/// let layer = RateLimitLayer::from_json_str(r#"[{"id": "all", "expression": "true",
///     "algorithm": "fixed_window", "limit": 100, "period": "1m", "key": ["ip"]}]"#)
///     .unwrap()
///     .make_response(|v: &Verdict| {
///         let status = match v.outcome {
///             Outcome::Limited => 429,
///             Outcome::BadRequest => 400,
///             _ => 503,
///         };
///         http::Response::builder()
///             .status(status)
///             .body(Bytes::from_static(b"slow down"))
///             .unwrap_or_default()
///     });
/// # let _ = layer;
/// ```
pub trait MakeResponse {
    /// The response for `verdict`.
    fn make_response(&self, verdict: &Verdict) -> Response<Bytes>;

    /// The response to a request that carries no client address: by
    /// default 500 with a `text/plain` body naming the fix (the layer logs
    /// the misconfiguration at `error` once either way).
    fn missing_peer(&self) -> Response<Bytes> {
        crate::missing_peer::missing_peer_answer()
    }

    /// The response to a request too large for the rules to read whole: by
    /// default `too_large.status()` (414 or 431) with
    /// `{"error":"too_large"}`.
    fn too_large(&self, too_large: TooLarge) -> Response<Bytes> {
        too_large_answer(too_large.status())
    }
}

/// The body of a 414 or 431: small JSON, like the limiter's own answers.
fn too_large_answer(status: StatusCode) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(br#"{"error":"too_large"}"#));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res
}

impl<F> MakeResponse for F
where
    F: Fn(&Verdict) -> Response<Bytes>,
{
    fn make_response(&self, verdict: &Verdict) -> Response<Bytes> {
        self(verdict)
    }
}

/// The default answers, with small JSON bodies (the table is at
/// [`MakeResponse`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonResponse;

impl MakeResponse for JsonResponse {
    fn make_response(&self, verdict: &Verdict) -> Response<Bytes> {
        let secs = verdict.retry_after_secs().unwrap_or(1);
        let (status, body, retry_after) = match verdict.outcome {
            Outcome::Limited => {
                let (body, retry_after) = limited(secs);
                (StatusCode::TOO_MANY_REQUESTS, body, Some(retry_after))
            }
            Outcome::BadRequest => (
                StatusCode::BAD_REQUEST,
                Bytes::from_static(br#"{"error":"bad_request"}"#),
                None,
            ),
            _ => (
                StatusCode::SERVICE_UNAVAILABLE,
                Bytes::from_static(br#"{"error":"unavailable"}"#),
                Some(crate::headers::number(secs)),
            ),
        };
        let mut res = Response::new(body);
        *res.status_mut() = status;
        let headers = res.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(retry_after) = retry_after {
            headers.insert(RETRY_AFTER, retry_after);
        }
        res
    }
}

/// The body and `Retry-After` of a 429 after `secs`: the ones this thread
/// wrote last when `secs` is the same (a flood of refusals shares them,
/// each a reference count), otherwise new ones.
fn limited(secs: u64) -> (Bytes, HeaderValue) {
    thread_local! {
        static LAST: RefCell<Option<(u64, Bytes, HeaderValue)>> = const { RefCell::new(None) };
    }
    let kept = LAST.with(|last| {
        let last = last.try_borrow().ok()?;
        let (kept_secs, body, retry_after) = last.as_ref()?;
        (*kept_secs == secs).then(|| (body.clone(), retry_after.clone()))
    });
    if let Some(parts) = kept {
        return parts;
    }
    let (body, retry_after) = (limited_body(secs), crate::headers::number(secs));
    LAST.with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = Some((secs, body.clone(), retry_after.clone()));
        }
    });
    (body, retry_after)
}

/// `{"error":"rate_limited","retry_after":N}`, in one buffer of the exact
/// size (the `Bytes` takes it over without copying).
fn limited_body(secs: u64) -> Bytes {
    const HEAD: &[u8] = br#"{"error":"rate_limited","retry_after":"#;
    let mut body = Vec::with_capacity(HEAD.len() + crate::headers::digits(secs) + 1);
    body.extend_from_slice(HEAD);
    crate::headers::push_u64(&mut body, secs);
    body.push(b'}');
    Bytes::from(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limited_body_is_the_documented_json() {
        for secs in [0, 1, 59, 3600, u64::MAX] {
            let want = format!(r#"{{"error":"rate_limited","retry_after":{secs}}}"#);
            assert_eq!(limited_body(secs), want.as_bytes());
        }
    }

    #[test]
    fn a_kept_429_reads_as_a_new_one() {
        for secs in [7, 7, 120, 7, 120, 120] {
            let (body, retry_after) = limited(secs);
            assert_eq!(body, limited_body(secs));
            assert_eq!(retry_after, HeaderValue::from(secs));
        }
    }
}
