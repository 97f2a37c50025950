//! Plays requests through a tonic server behind the tower layer, over
//! loopback TCP, with a tonic client (`--via grpc`).
//!
//! Each instance is a tonic server (`Server::serve_with_incoming`) whose
//! upstream answers any method: the case's `upstream_status` as a gRPC
//! status (200 an empty message, 404 `NOT_FOUND` trailers-only, ...) and its
//! `response_cost` as a [`ResponseCost`]. The client sends each request as
//! a unary call on the case's path and query, its headers as metadata, and
//! reads the answer back as HTTP through the guide's table
//! (`RESOURCE_EXHAUSTED` is a 429, `UNAVAILABLE` a 503, `INVALID_ARGUMENT`
//! a 400, `INTERNAL` a 500, `NOT_FOUND` a 404), its metadata as headers.
//!
//! What a gRPC call cannot carry as the case gives it travels in
//! `x-harness-*` metadata that a layer in front of the rate-limit layer
//! takes out: the client address (every call comes from 127.0.0.1), the
//! method (gRPC calls are POSTs), the host (the channel's authority), the
//! user agent (tonic's own), the verified claims and the upstream's answer.
//! The log rules over their limit ([`WouldLimit`]) come back in
//! `x-harness-would-limit`.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use ratelimit_tower::{ClientIp, RateLimitLayer, ResponseCost, VerifiedClaims, WouldLimit};
use tokio::task::JoinHandle;
use tonic::body::Body;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Server};
use tonic::{Code, Status};
use tonic_prost::ProstCodec;

use crate::harness::{pick, Harness, Reply, Toggle};
use crate::tower_harness::{to_http, viewer_headers, UpstreamCost, UpstreamStatus};

/// The messages of every call: `google.protobuf.Empty`.
type Empty = ProstCodec<(), ()>;

const IP: &str = "x-harness-ip";
const METHOD: &str = "x-harness-method";
const HOST: &str = "x-harness-host";
const USER_AGENT: &str = "x-harness-user-agent";
const CLAIMS: &str = "x-harness-claims";
const STATUS: &str = "x-harness-status";
const COST: &str = "x-harness-cost";
const WOULD_LIMIT: &str = "x-harness-would-limit";

/// Plays requests through tonic servers behind [`RateLimitLayer`].
pub struct GrpcHarness {
    channel: Channel,
    channels: Vec<Channel>,
    servers: Vec<JoinHandle<()>>,
    limiters: Vec<Limiter>,
    clock: ManualClock,
    toggle: Option<Toggle>,
}

impl std::fmt::Debug for GrpcHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcHarness").finish_non_exhaustive()
    }
}

impl Drop for GrpcHarness {
    fn drop(&mut self) {
        for s in &self.servers {
            s.abort();
        }
    }
}

impl GrpcHarness {
    /// Starts a tonic server for each instance's limiter (at least one, all
    /// on `clock`) on loopback, and connects to each.
    ///
    /// # Errors
    ///
    /// A server could not listen, or the client could not connect.
    pub async fn start(
        limiters: Vec<Limiter>,
        clock: ManualClock,
        toggle: Option<Toggle>,
    ) -> Result<Self, String> {
        let (mut channels, mut servers) = (Vec::new(), Vec::new());
        for l in &limiters {
            let layer = RateLimitLayer::new(l.clone())
                .viewer_headers(viewer_headers())
                .charge_before_end(true);
            let (addr, server) = serve(layer).await?;
            servers.push(server);
            let uri = format!("http://{addr}");
            let channel = Channel::from_shared(uri).map_err(|e| e.to_string())?;
            channels.push(
                channel
                    .connect()
                    .await
                    .map_err(|e| format!("connect: {e}"))?,
            );
        }
        Ok(Self {
            channel: pick(&channels, 0)?,
            channels,
            servers,
            limiters,
            clock,
            toggle,
        })
    }
}

/// A tonic server for `layer` on an ephemeral loopback port.
async fn serve(layer: RateLimitLayer) -> Result<(SocketAddr, JoinHandle<()>), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let server = tokio::spawn(async move {
        let _ = Server::builder()
            .layer(tower::util::MapRequestLayer::new(restore))
            .layer(tower::util::MapResponseLayer::new(would_limit))
            .layer(layer)
            .serve_with_incoming(tower::service_fn(upstream), incoming)
            .await;
    });
    Ok((addr, server))
}

/// The upstream: the case's status as gRPC, its cost as `ResponseCost`.
async fn upstream(req: Request<Body>) -> Result<Response<Body>, std::convert::Infallible> {
    let status = req
        .extensions()
        .get::<UpstreamStatus>()
        .map_or(200, |s| s.0);
    let cost = req.extensions().get::<UpstreamCost>().map_or(0, |c| c.0);
    let mut res = match status {
        200 => {
            let ok = tower::service_fn(|_: tonic::Request<()>| async {
                Ok::<_, Status>(tonic::Response::new(()))
            });
            tonic::server::Grpc::new(Empty::default())
                .unary(ok, req)
                .await
        }
        other => Status::new(code_of(other), "upstream").into_http(),
    };
    res.extensions_mut().insert(ResponseCost(cost));
    Ok(res)
}

/// What the case gives that a gRPC call cannot carry, back in place.
fn restore(mut req: Request<Body>) -> Request<Body> {
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
fn would_limit<B>(mut res: Response<B>) -> Response<B> {
    let ids = res.extensions().get::<WouldLimit>().map(|w| w.0.join(","));
    if let Some(v) = ids.and_then(|ids| HeaderValue::from_str(&ids).ok()) {
        res.headers_mut().insert(WOULD_LIMIT, v);
    }
    res
}

/// The gRPC status an upstream answers for an HTTP status.
fn code_of(status: u16) -> Code {
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
fn http_of(code: Code) -> u16 {
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
fn to_call(
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
fn reply(status: u16, metadata: MetadataMap) -> Reply {
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

impl Harness for GrpcHarness {
    async fn request(
        &mut self,
        at_ms: u64,
        req: RequestAttrs,
        upstream_status: u16,
        response_cost: u64,
    ) -> Reply {
        self.clock.set_ms(at_ms);
        let (metadata, path) = match to_call(&req, upstream_status, response_cost) {
            Ok(call) => call,
            Err(e) => {
                return Reply {
                    headers: vec![("x-harness-error".into(), e)],
                    ..Reply::default()
                }
            }
        };
        let call = tonic::Request::from_parts(metadata, Default::default(), ());
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        if let Err(e) = grpc.ready().await {
            let e = format!("channel not ready: {e}");
            return Reply {
                headers: vec![("x-harness-error".into(), e)],
                ..Reply::default()
            };
        }
        match grpc.unary(call, path, Empty::default()).await {
            Ok(res) => reply(200, res.into_parts().0),
            Err(status) => reply(http_of(status.code()), status.metadata().clone()),
        }
    }

    fn set_backend_up(&mut self, up: bool) -> Result<(), String> {
        match &mut self.toggle {
            Some(t) => t(up),
            None => Err("this backend cannot be taken down".into()),
        }
    }

    fn publish(&mut self, rules: RuleSet) -> Result<(), String> {
        for l in &self.limiters {
            l.publish(rules.clone());
        }
        Ok(())
    }

    fn use_instance(&mut self, i: usize) -> Result<(), String> {
        self.channel = pick(&self.channels, i)?;
        Ok(())
    }
}
