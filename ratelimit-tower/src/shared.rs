//! [`Shared`]: what every clone of the service and its futures share, one
//! `Arc` per layer. Below the service, its future and the code that builds
//! the answers, which all read it; the layer builds it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ratelimit_core::Limiter;

use crate::grpc::LimitedCode;
use crate::key_extractor::KeyParts;
use crate::observe::Counters;
use crate::RequestExtractor;

/// What every clone of the service shares.
pub(crate) struct Shared<M> {
    pub(crate) limiter: Limiter,
    pub(crate) extractor: RequestExtractor,
    pub(crate) keys: KeyParts,
    pub(crate) make_response: M,
    pub(crate) legacy_headers: bool,
    pub(crate) charge_before_end: bool,
    pub(crate) counters: Counters,
    /// The gRPC status of a limited call.
    pub(crate) grpc_limited: LimitedCode,
    /// Whether a request without a client address was logged (shared with
    /// the layer and its clones).
    pub(crate) missing_peer_logged: Arc<AtomicBool>,
}
