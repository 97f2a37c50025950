//! [`RateLimit`]: the service that asks the limiter, then calls the inner one.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use ratelimit_core::{Limiter, Outcome};
use tower_service::Service;
use tracing::Span;

use crate::answer::{charge_for, After, Own};
use crate::extract::find_peer;
use crate::future::ResponseFuture;
use crate::grpc::is_grpc;
use crate::observe::observe;
use crate::shared::Shared;
use crate::{JsonResponse, MakeResponse, ResponseBody, TooLarge};

/// Rate-limits the requests of the inner service `S`.
///
/// For each request: read its attributes, decide with the limiter, then
/// either call `S` (adding the `RateLimit` headers to its answer and
/// counting its status for `count_statuses` rules) or answer 429, 503 or
/// 400 with `M`. A request too large for the rules to read whole is
/// answered 414 or 431 before any rule runs (see
/// [`TooLarge`](crate::extract::TooLarge)). A gRPC call gets each answer
/// as gRPC (see [`grpc`](crate::grpc)). `poll_ready` is the inner service's; errors are the inner
/// service's.
pub struct RateLimit<S, M = JsonResponse> {
    inner: S,
    shared: Arc<Shared<M>>,
}

// `RateLimit::new` is in `layer.rs`, beside the layer it defaults to: the
// service does not import the layer that builds it.
impl<S, M> RateLimit<S, M> {
    pub(crate) fn from_shared(inner: S, shared: Arc<Shared<M>>) -> Self {
        Self { inner, shared }
    }

    /// The limiter.
    pub fn limiter(&self) -> &Limiter {
        &self.shared.limiter
    }
}

ratelimit_core::inner_accessors!(impl<S, M> RateLimit<S, M> { mut inner: S } "inner service");

impl<S: Clone, M> Clone for RateLimit<S, M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<S: fmt::Debug, M> fmt::Debug for RateLimit<S, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, M, ReqB, ResB> Service<Request<ReqB>> for RateLimit<S, M>
where
    S: Service<Request<ReqB>, Response = Response<ResB>> + Clone,
    M: MakeResponse,
{
    type Response = Response<ResponseBody<ResB>>;
    type Error = S::Error;
    type Future = ResponseFuture<S, ReqB, M>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    // One function for the whole path: each move of the request into
    // another function copies its 200-odd bytes, so it is moved only into
    // `inner.call`, and the view is read where it was returned.
    fn call(&mut self, mut req: Request<ReqB>) -> Self::Future {
        let shared = &self.shared;
        // One look for the peer address, for this check and the view.
        let peer = find_peer(&req);
        if !shared.extractor.accepts(peer) {
            return missing_peer(is_grpc(req.headers()), shared);
        }
        // One read of the published rules for both the headers to copy and
        // the check; per-rule reports only while their events are enabled
        // (never while nobody listens at all).
        let listened = span_listened();
        let reports = listened && tracing::enabled!(tracing::Level::DEBUG);
        let snapshot = (shared.limiter.snapshot()).reports(reports);
        let needed = snapshot.headers_used();
        let span;
        let entered;
        let check = if snapshot.reads_address_only() && shared.keys.is_empty() {
            // A compiled plan reads only the address and the cost.
            let view = match shared.extractor.try_address_at(&req, peer) {
                Ok(view) => view,
                Err(e) => return too_large(e, is_grpc(req.headers()), shared),
            };
            span = request_span(listened, &req);
            entered = span.as_deref().map(Span::enter);
            snapshot.check(&view)
        } else {
            let mut viewed = shared.extractor.try_view_at(&req, needed, peer);
            let view = match &mut viewed {
                Ok(view) => view,
                Err(e) => return too_large(*e, is_grpc(req.headers()), shared),
            };
            // The key extractors read the head the view borrows; they never
            // see a request refused for its size.
            if !shared.keys.is_empty() {
                view.set_derived(shared.keys.derive(&req));
            }
            span = request_span(listened, &req);
            // One entry into the span for the check and the call of the
            // inner service.
            entered = span.as_deref().map(Span::enter);
            // Decided now when the backend answers without I/O; the future
            // borrows neither the limiter nor the request.
            snapshot.check(&*view)
        };
        drop(snapshot);
        let verdict = match check.into_ready() {
            Ok(verdict) => verdict,
            Err(check) => {
                drop(entered);
                let shared = shared.clone();
                return ResponseFuture::checking(check, req, &mut self.inner, shared, span);
            }
        };
        observe(&shared.counters, span.as_deref(), &verdict);
        if verdict.outcome != Outcome::Forward {
            drop(entered);
            let grpc = is_grpc(req.headers());
            return ResponseFuture::refused(verdict, grpc, shared.clone(), span);
        }
        let charge = charge_for(&verdict, &mut req);
        let future = self.inner.call(req);
        drop(entered);
        ResponseFuture::calling(future, After::new(verdict, charge), shared.clone(), span)
    }
}

/// The request's `ratelimit` span (its method and path as the view reads
/// them), boxed when it reaches someone (see [`kept`]); `None` while
/// nobody listens.
#[inline(always)]
fn request_span<B>(listened: bool, req: &Request<B>) -> Option<Box<Span>> {
    listened
        .then(|| {
            tracing::debug_span!(
                "ratelimit",
                method = %req.method().as_str(),
                path = %req.uri().path(),
                outcome = tracing::field::Empty,
                // OpenTelemetry attributes (`observe::observe`).
                ratelimit.key = tracing::field::Empty,
                ratelimit.allowed = tracing::field::Empty,
                ratelimit.remaining = tracing::field::Empty,
                ratelimit.rule = tracing::field::Empty,
            )
        })
        .and_then(kept)
}

/// The 500 answer for a request without a peer address.
fn missing_peer<S, ReqB, M>(grpc: bool, shared: &Arc<Shared<M>>) -> ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    ResponseFuture::answered(Own::MissingPeer, grpc, shared.clone(), None)
}

/// The 414 or 431 answer for a request too large for the rules to read.
fn too_large<S, ReqB, M>(
    e: TooLarge,
    grpc: bool,
    shared: &Arc<Shared<M>>,
) -> ResponseFuture<S, ReqB, M>
where
    S: Service<Request<ReqB>>,
{
    let span = span_listened()
        .then(|| tracing::debug_span!("ratelimit", outcome = "too_large"))
        .and_then(kept);
    ResponseFuture::answered(Own::TooLarge(e), grpc, shared.clone(), span)
}

/// Whether a request's `ratelimit` span can reach anyone: a `tracing`
/// dispatcher has been set (globally or for a scope; it then decides), or a
/// `log` logger takes debug records (which `tracing` feeds them to, with its
/// `log` feature, while no dispatcher is set). Otherwise the span would be
/// disabled anyway, and making, entering, recording and dropping even a
/// disabled span costs some hundred instructions per request when that
/// feature is on (axum's default `tower-log` turns it on): the layer makes
/// none then.
#[inline(always)]
fn span_listened() -> bool {
    tracing::dispatcher::has_been_set() || log::max_level() >= log::LevelFilter::Debug
}

/// `span`, boxed for the response future, unless it reaches no one: the
/// dispatcher disabled it (a subscriber that takes `INFO` and above, the
/// usual production setting) and no `log` logger takes debug records
/// (`tracing`'s `log-always` feature feeds a disabled span's records to
/// one). Boxing, entering, recording and dropping a disabled span cost
/// about 300 instructions and an allocation per request.
#[inline(always)]
fn kept(span: Span) -> Option<Box<Span>> {
    let reaches = !span.is_disabled() || log::max_level() >= log::LevelFilter::Debug;
    reaches.then(|| Box::new(span))
}
