//! How a case's request travels as a unary gRPC call and its answer back:
//! the `x-harness-*` metadata the client adds and the server's first layer
//! takes out, the upstream's status as a gRPC code, and a gRPC status read
//! back as HTTP (the guide's table).

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};
use ratelimit_core::RequestAttrs;
use ratelimit_tower::{ClientIp, VerifiedClaims, WouldLimit};
use tonic::body::Body;
use tonic::metadata::MetadataMap;
use tonic::Code;

use crate::harness::Reply;
use crate::tower_harness::{to_http, UpstreamCost, UpstreamStatus};

const IP: &str = "x-harness-ip";
const METHOD: &str = "x-harness-method";
const HOST: &str = "x-harness-host";
const USER_AGENT: &str = "x-harness-user-agent";
const CLAIMS: &str = "x-harness-claims";
const STATUS: &str = "x-harness-status";
const COST: &str = "x-harness-cost";
const WOULD_LIMIT: &str = "x-harness-would-limit";

/// What the case gives that a gRPC call cannot carry, back in place.
pub(super) fn restore(mut req: Request<Body>) -> Request<Body> {
    let h = req.headers_mut();
    let take = |h: &mut HeaderMap, name| {
        h.remove(name)
            .and_then(|v| v.to_str().ok().map(str::to_owned))
    };
    let ip = take(h, IP).and_then(|v| v.parse().ok());
    let status = take(h, STATUS).and_then(|v| v.parse().ok());
    let cost = take(h, COST).and_then(|v| v.parse().ok());
    let claims = take(h, CLAIMS).and_then(|v| serde_json::from_str(&v).ok());
    let method = take(h, METHOD).and_then(|v| v.parse().ok());
    let host = take(h, HOST);
    match take(h, USER_AGENT).and_then(|v| HeaderValue::from_str(&v).ok()) {
        Some(ua) => h.insert(http::header::USER_AGENT, ua),
        None => h.remove(http::header::USER_AGENT),
    };
    if let Some(host) = host.and_then(|v| HeaderValue::from_str(&v).ok()) {
        h.insert(http::header::HOST, host);
        let mut parts = req.uri().clone().into_parts();
        parts.authority = None;
        parts.scheme = None;
        if let Ok(uri) = http::Uri::from_parts(parts) {
            *req.uri_mut() = uri;
        }
    }
    if let Some(method) = method {
        *req.method_mut() = method;
    }
    let ext = req.extensions_mut();
    ip.map(|ip| ext.insert(ClientIp(ip)));
    status.map(|s| ext.insert(UpstreamStatus(s)));
    cost.map(|c| ext.insert(UpstreamCost(c)));
    claims.map(|c| ext.insert(VerifiedClaims(c)));
    req
}

/// The log rules over their limit, as metadata.
pub(super) fn would_limit<B>(mut res: Response<B>) -> Response<B> {
    let ids = res.extensions().get::<WouldLimit>().map(|w| w.0.join(","));
    if let Some(v) = ids.and_then(|ids| HeaderValue::from_str(&ids).ok()) {
        res.headers_mut().insert(WOULD_LIMIT, v);
    }
    res
}

/// The gRPC status an upstream answers for an HTTP status.
pub(super) fn code_of(status: u16) -> Code {
    match status {
        400 => Code::InvalidArgument,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::NotFound,
        409 => Code::Aborted,
        429 => Code::ResourceExhausted,
        501 => Code::Unimplemented,
        503 => Code::Unavailable,
        504 => Code::DeadlineExceeded,
        _ => Code::Internal,
    }
}

/// The HTTP status a gRPC status reads as (the guide's table).
pub(super) fn http_of(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::InvalidArgument => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::NotFound => 404,
        Code::Aborted => 409,
        Code::ResourceExhausted => 429,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::DeadlineExceeded => 504,
        _ => 500,
    }
}

/// The case's request as a unary call's metadata and path.
pub(super) fn to_call(
    req: &RequestAttrs,
    upstream: u16,
    cost: u64,
) -> Result<(MetadataMap, http::uri::PathAndQuery), String> {
    let http_req: Request<Bytes> = to_http(req, upstream, cost).map_err(|e| e.to_string())?;
    let (mut parts, _) = http_req.into_parts();
    let h = &mut parts.headers;
    let mut put = |name: &'static str, v: String| -> Result<(), String> {
        let v = HeaderValue::from_str(&v).map_err(|e| format!("{name}: {e}"))?;
        h.insert(HeaderName::from_static(name), v);
        Ok(())
    };
    put(IP, req.client_ip.to_string())?;
    put(STATUS, upstream.to_string())?;
    put(COST, cost.to_string())?;
    put(METHOD, parts.method.to_string())?;
    if let Some(claims) = &req.jwt_claims {
        put(
            CLAIMS,
            serde_json::to_string(claims).map_err(|e| e.to_string())?,
        )?;
    }
    let h = &mut parts.headers;
    if let Some(host) = h.remove(http::header::HOST) {
        h.insert(HOST, host);
    }
    if let Some(ua) = h.remove(http::header::USER_AGENT) {
        h.insert(USER_AGENT, ua);
    }
    let path = parts.uri.path_and_query().cloned().ok_or("no path")?;
    Ok((MetadataMap::from_headers(parts.headers), path))
}

/// What the client saw, read as HTTP.
pub(super) fn reply(status: u16, metadata: MetadataMap) -> Reply {
    let headers = metadata.into_headers();
    let would_limit = headers
        .get(WOULD_LIMIT)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    Reply {
        status,
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        would_limit,
    }
}
