//! [`RateLimitLayer`]: the rules, the limiter and how requests are read.

use std::fmt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::rules::{RuleError, RuleFileError, RuleSet};
use ratelimit_core::Limiter;
use tower_layer::Layer;

use crate::grpc::LimitedCode;
use crate::key_extractor::KeyParts;
use crate::observe::Counters;
use crate::shared::Shared;
use crate::{
    JsonResponse, KeyExtractor, LoadError, RateLimit, RequestExtractor, TrustedProxies,
    ViewerHeaders,
};

/// A [`Layer`](https://docs.rs/tower-layer/0.3/tower_layer/trait.Layer.html)
/// that rate-limits requests with a [`Limiter`].
///
/// Clones share the limiter: counts, the penalty cache, the published rule
/// set and the emergency switches. Publish a new rule set at run time with
/// `layer.limiter().publish(set)`.
///
/// `M` builds the limiter's own answers ([`JsonResponse`] by default; see
/// [`RateLimitLayer::make_response`]).
#[must_use]
pub struct RateLimitLayer<M = JsonResponse> {
    limiter: Limiter,
    extractor: RequestExtractor,
    keys: KeyParts,
    make_response: M,
    legacy_headers: bool,
    charge_before_end: bool,
    grpc_limited: LimitedCode,
    /// Whether a request without a client address was logged: shared by
    /// the clones and every service they build, so that it is logged once.
    missing_peer_logged: Arc<AtomicBool>,
}

impl RateLimitLayer {
    /// A layer deciding with `limiter` (any backend, any clock).
    pub fn new(limiter: Limiter) -> Self {
        Self {
            limiter,
            extractor: RequestExtractor::new(),
            keys: KeyParts::default(),
            make_response: JsonResponse,
            legacy_headers: false,
            charge_before_end: false,
            grpc_limited: LimitedCode::ResourceExhausted,
            missing_peer_logged: Arc::default(),
        }
    }

    /// A layer for `rules` on the in-memory backend and the system clock.
    pub fn from_rules(rules: RuleSet) -> Self {
        Self::new(Limiter::new(rules))
    }

    /// A layer for a JSON rule set, on the in-memory backend.
    ///
    /// # Errors
    ///
    /// The rules do not validate; the error names the rule and the field.
    pub fn from_json_str(json: &str) -> Result<Self, RuleError> {
        Ok(Self::from_rules(RuleSet::from_json(json)?))
    }

    /// A layer for the JSON rule file at `path`, on the in-memory backend.
    /// Each of the rule set's [warnings](RuleSet::warnings) is logged at
    /// `warn` (see [`RuleSet::from_json_file`]).
    ///
    /// # Errors
    ///
    /// The file cannot be read, or its rules do not validate.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        Ok(Self::from_rules(load_file(path.as_ref())?))
    }

    /// A layer for the JSON rule file at `path` on `backend` (a fleet's
    /// `ratelimit_valkey::ValkeyBackend`, for one) and the system clock:
    /// what [`RateLimitLayer::from_json_file`] is for the in-memory
    /// backend. The warnings are logged the same way. For other limiter
    /// settings (a clock, a hash key, the local stores' sizes), build the
    /// [`Limiter`] and use [`RateLimitLayer::new`]; publish new rules
    /// through [`RateLimitLayer::limiter`].
    ///
    /// ```no_run
    /// use ratelimit_tower::ratelimit_core::HashKey;
    /// use ratelimit_tower::RateLimitLayer;
    /// use ratelimit_valkey::ValkeyBackend;
    ///
    /// # async fn run(secret: [u8; 16]) -> Result<(), Box<dyn std::error::Error>> {
    /// let backend = ValkeyBackend::builder("redis://127.0.0.1:6379")
    ///     // 16 secret bytes from the service's configuration, the same on every instance
    ///     .hash_key(HashKey::new(secret))
    ///     .build()
    ///     .await?;
    /// let layer = RateLimitLayer::from_json_file_with_backend("rules.json", backend)?;
    /// let limiter = layer.limiter().clone();
    /// // later: limiter.publish(RuleSet::from_json_file("rules.json")?),
    /// // limiter.switches().set_disable_rate_limiting(true)
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The file cannot be read, or its rules do not validate.
    pub fn from_json_file_with_backend(
        path: impl AsRef<Path>,
        backend: impl Backend,
    ) -> Result<Self, LoadError> {
        let rules = load_file(path.as_ref())?;
        Ok(Self::new(Limiter::builder(rules).backend(backend).build()))
    }
}

/// The rule file at `path` ([`RuleSet::from_json_file`], which logs its
/// warnings), failing with the layer's [`LoadError`].
fn load_file(path: &Path) -> Result<RuleSet, LoadError> {
    RuleSet::from_json_file(path).map_err(|e| match e {
        RuleFileError::Io { path, source } => LoadError::Io { path, source },
        RuleFileError::Rules { source, .. } => LoadError::Rules(source),
    })
}

impl<M> RateLimitLayer<M> {
    /// The limiter: publish rules, flip the emergency switches
    /// (`limiter().switches()`), read rule stats.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// Trusts these proxies to say who the client is (none by default).
    pub fn trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.extractor = self.extractor.trusted_proxies(proxies);
        self
    }

    /// Reads viewer facts (country, ASN, JA4, locale) from these headers
    /// (none by default).
    pub fn viewer_headers(mut self, viewer: ViewerHeaders) -> Self {
        self.extractor = self.extractor.viewer_headers(viewer);
        self
    }

    /// Keys requests that carry no peer address as `0.0.0.0` (one bucket
    /// for all of them) instead of answering them 500; see
    /// [`RequestExtractor::shared_bucket_without_peer`].
    pub fn shared_bucket_without_peer(mut self) -> Self {
        self.extractor = self.extractor.shared_bucket_without_peer();
        self
    }

    /// The longest path, query and request-target host the rules read, in
    /// bytes (16 KiB by default): longer ones are answered 414 URI Too Long
    /// before any rule runs, since a rule deciding on a prefix would miss
    /// what the application sees. Headers the rules read are bounded by
    /// [`extract`](crate::extract)'s limits and answered 431 beyond them.
    /// Set it after [`RateLimitLayer::extractor`], which replaces it.
    pub fn max_uri_bytes(mut self, max: usize) -> Self {
        self.extractor = self.extractor.max_uri_bytes(max);
        self
    }

    /// Replaces how requests are read.
    pub fn extractor(mut self, extractor: RequestExtractor) -> Self {
        self.extractor = extractor;
        self
    }

    /// Derives the key part `app:<name>` from each request with
    /// `extractor` (a closure `|req: &RequestHead<'_>| -> Option<String>`
    /// over the request's borrowed [head](crate::RequestHead), or a
    /// [`KeyExtractor`]), for rules keyed on it. `None` makes the part
    /// missing: the rule's `on_missing_key` applies. Registering a name
    /// again replaces its extractor. See [`KeyExtractor`].
    ///
    /// ```
    /// use ratelimit_tower::{RateLimitLayer, RequestHead};
    ///
    /// let layer = RateLimitLayer::from_json_str(r#"[{"id": "per-user",
    ///     "expression": "true", "algorithm": "sliding_window", "limit": 100,
    ///     "period": "1m", "key": ["ip", "app:user"], "on_missing_key": "skip"}]"#)?
    /// .key_part("user", |req: &RequestHead<'_>| {
    ///     Some(req.headers().get("x-user")?.to_str().ok()?.to_owned())
    /// });
    /// # Ok::<(), ratelimit_core::rules::RuleError>(())
    /// ```
    pub fn key_part(mut self, name: impl Into<String>, extractor: impl KeyExtractor) -> Self {
        self.keys.insert(name.into(), Arc::new(extractor));
        self
    }

    /// Also sends `X-RateLimit-Limit`, `-Remaining` and `-Reset` (off by
    /// default); see [`headers`](crate::headers).
    pub fn legacy_headers(mut self, on: bool) -> Self {
        self.legacy_headers = on;
        self
    }

    /// Awaits the charge of a `charge: response` rule before the response
    /// body reports its end (off by default: the charge runs in a spawned
    /// task, off the response's path). On, the next request of a client
    /// that read its response to the end sees the charge, even on a backend
    /// that waits on the network; the body's last poll takes one more round
    /// trip. A body dropped before its end is charged in a spawned task
    /// either way. See [`Charge`](crate::Charge).
    ///
    /// ```
    /// use ratelimit_tower::RateLimitLayer;
    ///
    /// let layer = RateLimitLayer::from_json_str(r#"[{"id": "rows",
    ///     "expression": "true", "algorithm": "fixed_window", "limit": 10000,
    ///     "period": "1m", "key": ["ip"], "charge": "response"}]"#)?
    /// .charge_before_end(true);
    /// # Ok::<(), ratelimit_core::rules::RuleError>(())
    /// ```
    pub fn charge_before_end(mut self, on: bool) -> Self {
        self.charge_before_end = on;
        self
    }

    /// The gRPC status of a limited gRPC call: `RESOURCE_EXHAUSTED` by
    /// default, or [`LimitedCode::Unavailable`]. Every other answer's
    /// status is fixed (see [`grpc`](crate::grpc)).
    ///
    /// ```
    /// use ratelimit_tower::grpc::LimitedCode;
    /// use ratelimit_tower::RateLimitLayer;
    ///
    /// let layer = RateLimitLayer::per_ip_per_minute(100).grpc_limited_code(LimitedCode::Unavailable);
    /// # let _ = layer;
    /// ```
    pub fn grpc_limited_code(mut self, code: LimitedCode) -> Self {
        self.grpc_limited = code;
        self
    }

    /// Builds the layer's own answers with `make_response` instead.
    pub fn make_response<M2>(self, make_response: M2) -> RateLimitLayer<M2> {
        RateLimitLayer {
            limiter: self.limiter,
            extractor: self.extractor,
            keys: self.keys,
            make_response,
            legacy_headers: self.legacy_headers,
            charge_before_end: self.charge_before_end,
            grpc_limited: self.grpc_limited,
            missing_peer_logged: self.missing_peer_logged,
        }
    }
}

impl<M: Clone> Clone for RateLimitLayer<M> {
    fn clone(&self) -> Self {
        Self {
            limiter: self.limiter.clone(),
            extractor: self.extractor.clone(),
            keys: self.keys.clone(),
            make_response: self.make_response.clone(),
            legacy_headers: self.legacy_headers,
            charge_before_end: self.charge_before_end,
            grpc_limited: self.grpc_limited,
            missing_peer_logged: self.missing_peer_logged.clone(),
        }
    }
}

impl<M> fmt::Debug for RateLimitLayer<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("extractor", &self.extractor)
            .field("key_parts", &self.keys)
            .field("legacy_headers", &self.legacy_headers)
            .field("charge_before_end", &self.charge_before_end)
            .field("grpc_limited", &self.grpc_limited)
            .finish_non_exhaustive()
    }
}

impl<S> RateLimit<S> {
    /// Wraps `inner` with a default [`RateLimitLayer`] over `limiter`.
    pub fn new(inner: S, limiter: Limiter) -> Self {
        RateLimitLayer::new(limiter).layer(inner)
    }
}

impl<S, M: Clone> Layer<S> for RateLimitLayer<M> {
    type Service = RateLimit<S, M>;

    fn layer(&self, inner: S) -> Self::Service {
        let shared = Shared {
            limiter: self.limiter.clone(),
            extractor: self.extractor.clone(),
            keys: self.keys.clone(),
            make_response: self.make_response.clone(),
            legacy_headers: self.legacy_headers,
            charge_before_end: self.charge_before_end,
            counters: Counters::new(),
            grpc_limited: self.grpc_limited,
            missing_peer_logged: self.missing_peer_logged.clone(),
        };
        RateLimit::from_shared(inner, Arc::new(shared))
    }
}
