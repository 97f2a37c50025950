//! gRPC over loopback TCP: a tonic server behind the rate-limit layer
//! serving `grpc.health.v1` (tonic-health's generated code: no protoc) and
//! `test.Extra`, two methods written by hand on the health messages, and a
//! tonic client for any method.
//!
//! `test.Extra/Chat` is a client stream whose every message is checked
//! with the keyed rule `chat-messages`, keyed on the peer's address: the
//! guide's per-message recipe. `test.Extra/Complete` is a unary call whose
//! response costs the number written in the request's `service` field (an
//! LLM call's tokens, known at its end), reported as a `ResponseCost`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::uri::PathAndQuery;
use ratelimit_tower::ratelimit_core::Limiter;
use ratelimit_tower::{RateLimitLayer, ResponseCost};
use tokio::net::TcpListener;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::server::TcpConnectInfo;
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status, Streaming};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_prost::ProstCodec;

/// The client's codec of `test.Extra`, on the health messages.
pub type Codec = ProstCodec<HealthCheckRequest, HealthCheckResponse>;

/// The server's codec of `test.Extra`.
type ServerCodec = ProstCodec<HealthCheckResponse, HealthCheckRequest>;

/// Serves `layer` in front of the health service and `test.Extra` on an
/// ephemeral loopback port; the layer reads the peer from tonic's
/// `TcpConnectInfo` (feature `tonic`).
pub async fn serve_grpc(layer: RateLimitLayer) -> SocketAddr {
    serve(layer, false).await
}

/// [`serve_grpc`] on a server whose transport gives no peer address (as a
/// custom transport would): `TcpConnectInfo` is taken out before the layer.
pub async fn serve_grpc_without_address(layer: RateLimitLayer) -> SocketAddr {
    serve(layer, true).await
}

async fn serve(layer: RateLimitLayer, hide_peer: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (_reporter, health) = tonic_health::server::health_reporter();
    let extra = Extra {
        limiter: layer.limiter().clone(),
    };
    let hide = tower::util::MapRequestLayer::new(move |mut req: http::Request<Body>| {
        if hide_peer {
            req.extensions_mut().remove::<TcpConnectInfo>();
        }
        req
    });
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(async move {
        let _ = Server::builder()
            .layer(hide)
            .layer(layer)
            .add_service(health)
            .add_service(extra)
            .serve_with_incoming(incoming)
            .await;
    });
    addr
}

/// A channel to `addr`.
pub async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect()
        .await
        .expect("connect")
}

/// A tonic client for any method on `channel`.
pub async fn client(channel: &Channel) -> tonic::client::Grpc<Channel> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("ready");
    grpc
}

/// A health check request for `service`.
pub fn check_request(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.to_owned(),
    }
}

/// The `test.Extra` service.
#[derive(Debug, Clone)]
pub struct Extra {
    limiter: Limiter,
}

impl NamedService for Extra {
    const NAME: &'static str = "test.Extra";
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<Body>> for Extra {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let limiter = self.limiter.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ServerCodec::default());
            let res = match req.uri().path() {
                "/test.Extra/Chat" => {
                    let chat = tower::service_fn(move |r| chat(limiter.clone(), r));
                    grpc.client_streaming(chat, req).await
                }
                "/test.Extra/Complete" => grpc.unary(tower::service_fn(complete), req).await,
                _ => Status::unimplemented("no such method").into_http(),
            };
            Ok(res)
        })
    }
}

/// The per-message recipe: every message of the stream is checked with
/// the keyed rule `chat-messages`, keyed on the caller's address; the
/// first refused one ends the call with `RESOURCE_EXHAUSTED`. Answers
/// how many messages it took (in `status`).
async fn chat(
    limiter: Limiter,
    req: Request<Streaming<HealthCheckRequest>>,
) -> Result<Response<HealthCheckResponse>, Status> {
    let peer = req.remote_addr().map(|a| a.ip().to_string());
    let peer = peer.ok_or_else(|| Status::internal("no peer address"))?;
    let limit = limiter
        .keyed_rule("chat-messages")
        .map_err(|e| Status::internal(e.to_string()))?;
    let mut messages = req.into_inner();
    let mut taken = 0;
    while messages.message().await?.is_some() {
        let decision = limit
            .check(&peer)
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?;
        if let Some(wait) = decision.retry_after() {
            let text = format!("message {} over the limit, retry in {wait:?}", taken + 1);
            return Err(Status::resource_exhausted(text));
        }
        taken += 1;
    }
    Ok(Response::new(HealthCheckResponse { status: taken }))
}

/// A unary call whose response costs the number in the request's
/// `service` field, known once the work is done.
async fn complete(
    req: Request<HealthCheckRequest>,
) -> Result<Response<HealthCheckResponse>, Status> {
    let tokens: u64 = req.get_ref().service.parse().unwrap_or(0);
    let mut res = Response::new(HealthCheckResponse {
        status: ServingStatus::Serving as i32,
    });
    res.extensions_mut().insert(ResponseCost(tokens));
    Ok(res)
}

/// Calls `test.Extra/Complete` for `tokens`.
pub async fn complete_call(channel: &Channel, tokens: u64) -> Result<(), Status> {
    let path = PathAndQuery::from_static("/test.Extra/Complete");
    let req = Request::new(check_request(&tokens.to_string()));
    client(channel)
        .await
        .unary(req, path, Codec::default())
        .await?;
    Ok(())
}

/// Streams `n` messages to `test.Extra/Chat`: how many it took.
pub async fn chat_call(channel: &Channel, n: usize) -> Result<i32, Status> {
    let path = PathAndQuery::from_static("/test.Extra/Chat");
    let messages = stream_of((0..n).map(|i| check_request(&i.to_string())));
    let res = client(channel)
        .await
        .client_streaming(Request::new(messages), path, Codec::default())
        .await?;
    Ok(res.into_inner().status)
}

/// A stream of `items`, without tokio-stream.
pub fn stream_of<T: Send + 'static>(
    items: impl Iterator<Item = T> + Send + 'static,
) -> impl tonic::codegen::tokio_stream::Stream<Item = T> + Send + 'static {
    tonic::codegen::tokio_stream::iter(items)
}
