//! The answer to a request that carries no client address.
//!
//! Without one, every such client would be keyed alike and share one
//! bucket: one client could lock out all others, or the limits would hardly
//! apply. The layer answers 500 (gRPC: `INTERNAL`) with a message naming
//! the fix and logs an error (once) instead, unless
//! [`RateLimitLayer::shared_bucket_without_peer`](crate::RateLimitLayer::shared_bucket_without_peer)
//! asks for the shared bucket on purpose.

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response, StatusCode};

/// The body of the 500 answer.
pub(crate) const MISSING_PEER_MESSAGE: &str = "rate limiter misconfigured: the request carries no \
client address. Serve axum with `into_make_service_with_connect_info::<SocketAddr>()`, serve \
tonic with ratelimit-tower's `tonic` feature on (it reads `TcpConnectInfo`), or insert `ClientIp` \
with `SetClientIpLayer` in front of the layer; `shared_bucket_without_peer()` makes such requests \
share one bucket instead.\n";

/// Logs the misconfiguration at `error`, the first time `logged` is
/// still false (once per layer and its clones: a flood of such requests
/// would repeat it).
pub(crate) fn log_missing_peer(logged: &AtomicBool) {
    if !logged.swap(true, Ordering::Relaxed) {
        tracing::error!(
            "ratelimit: no client address in the request extensions: answering 500 (gRPC: \
             INTERNAL); serve axum with into_make_service_with_connect_info::<SocketAddr>(), \
             enable ratelimit-tower's `tonic` feature for tonic, or insert ClientIp \
             (SetClientIpLayer); logged once"
        );
    }
}

/// The default 500 answer ([`MakeResponse::missing_peer`](crate::MakeResponse::missing_peer)).
pub(crate) fn missing_peer_answer() -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(MISSING_PEER_MESSAGE.as_bytes()));
    *res.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}
