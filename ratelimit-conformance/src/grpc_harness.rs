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

use http::{Request, Response};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use ratelimit_tower::{RateLimitLayer, ResponseCost};
use tokio::task::JoinHandle;
use tonic::body::Body;
use tonic::transport::{Channel, Server};
use tonic::Status;
use tonic_prost::ProstCodec;

use crate::harness::{pick, publish_all, set_up, Harness, Reply, Toggle};
use crate::tower_harness::{viewer_headers, UpstreamCost, UpstreamStatus};

mod wire;

use wire::{code_of, http_of, reply, restore, to_call, would_limit};

/// The messages of every call: `google.protobuf.Empty`.
type Empty = ProstCodec<(), ()>;

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
        set_up(&mut self.toggle, up)
    }

    fn publish(&mut self, rules: RuleSet) -> Result<(), String> {
        publish_all(&self.limiters, &rules)
    }

    fn use_instance(&mut self, i: usize) -> Result<(), String> {
        self.channel = pick(&self.channels, i)?;
        Ok(())
    }
}
