//! The site the hostile-input tests (`tests/tests/hostile_*.rs`) attack over
//! raw TCP: the tower layer on an in-memory backend and penalty cache of
//! bounded capacity, behind a stand-in JWT verifier, on axum's server or a
//! roomier hyper one.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, Limiter, ManualClock};
use ratelimit_tower::{ForwardedHeader, RateLimitLayer, TrustedProxies, VerifiedClaims};

use super::http::{exchange, get, serve_axum, serve_roomy};

/// The subjects the memory backend holds at most.
pub const MEMORY_CAPACITY: usize = 10_000;
/// The penalties the penalty cache holds at most.
pub const PENALTY_CAPACITY: usize = 1_000;

/// A limit-1 rule on each key part a hostile request can bend (header,
/// cookie, query, path, address, claim), and floods' rules.
pub const RULES: &str = r#"[
  {"id": "by-header", "expression": "http.request.uri.path eq \"/h\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["ip", "header:x-tenant"]},
  {"id": "by-cookie", "expression": "http.request.uri.path eq \"/c\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["ip", "cookie:sid"]},
  {"id": "by-query", "expression": "http.request.uri.path eq \"/q\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["ip", "query:a"]},
  {"id": "by-path", "expression": "starts_with(http.request.uri.path, \"/p/\")",
   "algorithm": "distinct", "distinct_of": "path", "limit": 3, "period": "1h", "key": ["ip"]},
  {"id": "ids", "expression": "http.request.uri.path eq \"/ids\"",
   "algorithm": "distinct", "distinct_of": "query:id", "limit": 3, "period": "1h", "key": ["ip"]},
  {"id": "by-ip", "expression": "http.request.uri.path eq \"/ip\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["ip"]},
  {"id": "by-claim", "expression": "http.request.uri.path eq \"/jwt\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["jwt_claim:sub"],
   "on_missing_key": "reject"},
  {"id": "v6", "expression": "http.request.uri.path eq \"/v6\"",
   "algorithm": "fixed_window", "limit": 10, "period": "1h", "key": ["ip"]},
  {"id": "rotating", "expression": "http.request.uri.path eq \"/rot\"",
   "algorithm": "fixed_window", "limit": 1000, "period": "1h", "key": ["ip", "header:x-key"]},
  {"id": "penalized", "expression": "http.request.uri.path eq \"/pen\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1h", "key": ["ip", "header:x-key"],
   "penalty": "1h"}
]"#;

/// A server with the rules above on an in-memory backend of
/// [`MEMORY_CAPACITY`] subjects and a penalty cache of [`PENALTY_CAPACITY`].
pub struct Site {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its limiter.
    pub limiter: Limiter,
    /// The limiter's backend.
    pub memory: Arc<MemoryBackend>,
    /// The forwarding header the site trusts.
    pub forwarded: ForwardedHeader,
}

/// Which HTTP server runs the site.
#[derive(Clone, Copy, PartialEq)]
pub enum Server {
    /// axum's own server (hyper's defaults: 100 header lines, ~400 KiB).
    Axum,
    /// hyper with room for 20,000 header lines and 8 MiB of head (slow:
    /// hyper sets up room for every allowed line on every request).
    Roomy,
}

/// A [`Site`] behind `proxies`, served by `server`.
pub async fn site(proxies: TrustedProxies, server: Server) -> Site {
    let memory = Arc::new(MemoryBackend::with_capacity(MEMORY_CAPACITY));
    // A clock that stands still: the rules' one-hour calendar windows must
    // not roll over in the middle of a flood (a run across a full hour of
    // the system clock once admitted a second window's worth). A fixed hash
    // key: the `distinct` rules count values as bits of a 1024-bit map
    // under it, and under the default (random per process) two of the few
    // values a test sends share a bit in about one run of 170 (4 paths)
    // or of 100 (5 ids): the fourth path was admitted once on CI. Under
    // this key they share none, on every run.
    let limiter = Limiter::builder(RuleSet::from_json(RULES).expect("rules"))
        .clock(ManualClock::new(1_767_225_600_000))
        .hash_key(HashKey::new([0x5a; 16]))
        .backend(memory.clone())
        .penalty_cache_capacity(PENALTY_CAPACITY)
        .build();
    let forwarded = proxies.forwarded_header();
    let layer = RateLimitLayer::new(limiter.clone()).trusted_proxies(proxies);
    let app = Router::new()
        .fallback(|| async { "ok" })
        .layer(layer)
        // The auth layer runs before (outside) the rate limit layer.
        .layer(middleware::from_fn(test_auth));
    let addr = match server {
        Server::Axum => serve_axum(app).await,
        Server::Roomy => serve_roomy(app).await,
    };
    Site {
        addr,
        limiter,
        memory,
        forwarded,
    }
}

/// A stand-in for a JWT verifier: `x-user: <name>` "verifies" as the claim
/// `sub` = `<name>` repeated to 1 MiB, plus 1,000 other claims.
pub async fn test_auth(mut req: Request, next: Next) -> Response {
    if let Some(user) = req.headers().get("x-user").map(|v| v.as_bytes().to_vec()) {
        let user = String::from_utf8_lossy(&user).into_owned();
        let mut sub = "s".repeat(1024 * 1024 - user.len());
        sub.push_str(&user);
        let mut claims: Vec<(String, String)> = (0..1_000)
            .map(|i| (format!("c{i}"), "x".repeat(100)))
            .collect();
        claims.push(("sub".into(), sub));
        req.extensions_mut().insert(VerifiedClaims::new(claims));
    }
    next.run(req).await
}

impl Site {
    /// The status of a GET of `target` with `headers`; panics without one.
    pub async fn status(&self, target: &[u8], headers: &[&[u8]]) -> u16 {
        match exchange(self.addr, &get(target, headers)).await {
            Ok(r) => r.status,
            Err(e) => panic!(
                "{}: no answer: {e}",
                String::from_utf8_lossy(&target[..target.len().min(80)])
            ),
        }
    }

    /// The server still answers, and the stores are within bounds.
    pub async fn assert_sound(&self, what: &str) {
        assert_eq!(
            self.status(b"/health", &[]).await,
            200,
            "{what}: server down"
        );
        assert!(
            self.memory.len() <= MEMORY_CAPACITY,
            "{what}: the memory backend holds {} > {MEMORY_CAPACITY}",
            self.memory.len()
        );
        let pc = self.limiter.penalty_cache();
        assert!(
            pc.len() <= PENALTY_CAPACITY,
            "{what}: the penalty cache holds {} > {PENALTY_CAPACITY}",
            pc.len()
        );
    }
}

/// A header line `name: value`.
pub fn header(name: &str, value: &[u8]) -> Vec<u8> {
    let mut h = name.as_bytes().to_vec();
    h.extend_from_slice(b": ");
    h.extend_from_slice(value);
    h
}
