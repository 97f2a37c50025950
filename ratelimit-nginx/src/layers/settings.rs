//! What the two layers share: how they read a request, and what they do
//! when it carries no client address.
//!
//! A zone keyed on `$client_ip` or `$remote_addr` needs the client's
//! address. Without one (axum served without `ConnectInfo`, a hyper server
//! without `SetClientIpLayer`), the key would be empty and the request never
//! limited: the layers answer 500 instead, naming the fix, and log an error.
//! [`shared_bucket_without_peer`](crate::LimitReqLayer::shared_bucket_without_peer)
//! keys such requests as `0.0.0.0` instead: they all share one bucket.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use http::{Request, Response, StatusCode};

use super::source::{Extractor, HttpSource, PeerAddrFn};
use crate::key::KeyVar;
use crate::log::LOG_TARGET;
use crate::KeyTemplate;

/// The body of the 500 answer to a request without a client address.
pub(crate) const MISSING_PEER_MESSAGE: &str = "rate limiter misconfigured: the request carries no \
client address. Serve axum with `into_make_service_with_connect_info::<SocketAddr>()`, or insert \
`ClientIp` with `SetClientIpLayer` (ratelimit-tower) in front of the layer; \
`shared_bucket_without_peer()` makes such requests share one bucket instead.\n";

/// The settings both layers hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) extractor: Extractor,
    /// Some zone's key reads `$client_ip` or `$remote_addr`.
    reads_address: bool,
    /// Requests without an address share the `0.0.0.0` bucket.
    shared_without_peer: bool,
}

impl Settings {
    pub(crate) fn new<'a>(keys: impl IntoIterator<Item = &'a KeyTemplate>) -> Self {
        let reads_address = keys.into_iter().any(|key| {
            key.variables()
                .any(|v| matches!(v, KeyVar::ClientIp | KeyVar::RemoteAddr))
        });
        Self {
            reads_address,
            ..Self::default()
        }
    }

    pub(crate) fn set_peer_addr(&mut self, f: PeerAddrFn) {
        self.extractor.peer_addr = Some(f);
    }

    pub(crate) fn set_site(&mut self, site: Arc<str>) {
        self.extractor.site = Some(site);
    }

    pub(crate) fn set_shared_without_peer(&mut self) {
        self.shared_without_peer = true;
    }

    /// The key source of `req`, or the 500 answer when it has no address
    /// that a key needs.
    pub(crate) fn source<'a, B, R>(
        &'a self,
        req: &'a Request<B>,
    ) -> Result<HttpSource<'a>, Response<R>>
    where
        R: From<&'static str>,
    {
        let mut source = self.extractor.source(req);
        if !self.reads_address || !source.lacks_address() {
            return Ok(source);
        }
        if self.shared_without_peer {
            source.set_address(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            return Ok(source);
        }
        tracing::error!(
            target: LOG_TARGET,
            "no client address in the request extensions: answering 500; serve axum with \
             into_make_service_with_connect_info::<SocketAddr>() or insert ClientIp \
             (SetClientIpLayer)"
        );
        let mut response = Response::new(R::from(MISSING_PEER_MESSAGE));
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        Err(response)
    }
}

/// The builder methods both layers share, over their `settings` and
/// `policy` fields.
macro_rules! shared_builders {
    ($layer:ident) => {
        impl $layer {
            /// Finds the peer address (`$remote_addr`, and `$client_ip`
            /// without a [`ClientIp`](ratelimit_core::ClientIp)) with `f`
            /// instead of the default lookup (axum's `ConnectInfo<SocketAddr>`
            /// with feature `axum`, then a `SocketAddr` extension).
            #[must_use]
            pub fn with_peer_addr(
                mut self,
                f: fn(&http::Extensions) -> Option<std::net::SocketAddr>,
            ) -> Self {
                self.settings.set_peer_addr(f);
                self
            }

            /// Keys requests that carry no client address as `0.0.0.0`, so
            /// that they all share one bucket, instead of answering them
            /// 500. Only for a deliberate setup, such as a server behind a
            /// single proxy that hides the client.
            #[must_use]
            pub fn shared_bucket_without_peer(mut self) -> Self {
                self.settings.set_shared_without_peer();
                self
            }

            /// Sets `$site` for requests without a [`SiteName`](crate::SiteName) extension.
            #[must_use]
            pub fn with_site(mut self, site: impl Into<std::sync::Arc<str>>) -> Self {
                self.settings.set_site(site.into());
                self
            }

            /// Makes every limit a dry run when `on`, as in a shadow site.
            #[must_use]
            pub fn with_shadow(mut self, on: bool) -> Self {
                if on {
                    self.policy = self.policy.with_dry_run(true);
                }
                self
            }
        }
    };
}

pub(crate) use shared_builders;
