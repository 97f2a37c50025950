//! From an `http::Request` to what the rules read: the borrowed
//! [`HttpView`], what the layer checks (nothing copied). It reads:
//!
//! - The client IP: the peer address from the extensions (see
//!   [`ClientIp`]), then [`TrustedProxies`]. The layer answers a request
//!   without any peer address 500 (see [`RequestExtractor::has_peer`]):
//!   serve axum with `into_make_service_with_connect_info::<SocketAddr>()`,
//!   or wrap a hyper service in [`SetClientIp`](crate::SetClientIp). Read
//!   here directly, or with
//!   [`shared_bucket_without_peer`](RequestExtractor::shared_bucket_without_peer),
//!   such a request is keyed as `0.0.0.0`: all of them share one bucket.
//! - Method, host, path and query; invalid UTF-8 is decoded lossily. The
//!   host is the request target's authority when the target is in absolute
//!   form (`GET http://api.example.com/ HTTP/1.1`, and HTTP/2's
//!   `:authority`), as RFC 9112 says, otherwise the `Host` header; it is
//!   lower-cased, without port and without one trailing dot, so
//!   `API.example.com.:443` is `api.example.com`.
//! - Headers: for each header name its first value (the core keys on the
//!   first of repeated values), and every `Cookie` line (the cookie key
//!   looks across lines). The rules may read at most [`MAX_HEADERS`]
//!   values and [`MAX_HEADER_BYTES`] bytes in all, each value at most
//!   [`MAX_VALUE_BYTES`]; the view reads them in place.
//! - Verified JWT claims from [`VerifiedClaims`](crate::VerifiedClaims),
//!   `app:` values from [`AppValues`](crate::AppValues) (after the values of
//!   the layer's key extractors), the cost from [`Cost`](crate::Cost).
//! - Country, ASN, JA4 and locale from the [`ViewerHeaders`] you name, off
//!   by default, and only read when the peer is a trusted proxy (or no proxy
//!   is configured: then the application vouches for its listeners).
//!
//! Rules never decide on a prefix of what the application sees: the layer
//! reads requests with [`RequestExtractor::try_view`], which refuses
//! a path, query or request-target host longer than
//! [`RequestExtractor::max_uri_bytes`] ([`MAX_URI_PART`], 16 KiB, by
//! default) with [`TooLarge::Uri`] (414 URI Too Long), and headers the rules
//! read beyond the bounds above with [`TooLarge::Headers`] (431 Request
//! Header Fields Too Large), before any rule runs.
//! [`RequestExtractor::view`] reads any request whole, without bounds.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};

use http::header::HeaderName;
use http::{HeaderMap, Request, StatusCode};

use crate::{ClientIp, TrustedProxies};

/// Most header values the rules read per request.
pub const MAX_HEADERS: usize = 256;
/// Most header bytes (names and values) the rules read per request.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Longest header value the rules read.
pub const MAX_VALUE_BYTES: usize = 8 * 1024;
/// The default longest path, query or host (see
/// [`RequestExtractor::max_uri_bytes`]).
pub const MAX_URI_PART: usize = 16 * 1024;
/// Longest viewer value (country, ASN, JA4, locale) read.
pub const MAX_VIEWER_VALUE: usize = 256;

/// Headers a trusted CDN or proxy sets with facts about the viewer. Each is
/// off until named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ViewerHeaders {
    country: Option<HeaderName>,
    asnum: Option<HeaderName>,
    ja4: Option<HeaderName>,
    locale: Option<HeaderName>,
}

impl ViewerHeaders {
    /// None read.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether none is read.
    pub(crate) fn is_empty(&self) -> bool {
        self.country.is_none()
            && self.asnum.is_none()
            && self.ja4.is_none()
            && self.locale.is_none()
    }

    /// The country header, such as `cf-ipcountry`.
    pub fn country(mut self, name: HeaderName) -> Self {
        self.country = Some(name);
        self
    }

    /// The autonomous system number header.
    pub fn asnum(mut self, name: HeaderName) -> Self {
        self.asnum = Some(name);
        self
    }

    /// The JA4 TLS fingerprint header.
    pub fn ja4(mut self, name: HeaderName) -> Self {
        self.ja4 = Some(name);
        self
    }

    /// The locale header.
    pub fn locale(mut self, name: HeaderName) -> Self {
        self.locale = Some(name);
        self
    }
}

/// Why a request is refused before any rule sees it: part of it is longer
/// than the rules may read, and deciding on a prefix of what the
/// application sees would let a client hide what the rules look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TooLarge {
    /// The path, the query or the request target's host: 414 URI Too Long.
    Uri,
    /// A header the rules read, or the headers together: 431 Request
    /// Header Fields Too Large.
    Headers,
}

impl TooLarge {
    /// The status the layer answers with.
    pub fn status(self) -> StatusCode {
        match self {
            TooLarge::Uri => StatusCode::URI_TOO_LONG,
            TooLarge::Headers => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        }
    }
}

/// Reads requests as the rules see them ([`HttpView`]); the layer holds
/// one.
#[derive(Debug)]
pub struct RequestExtractor {
    proxies: TrustedProxies,
    viewer: ViewerHeaders,
    shared_without_peer: bool,
    max_uri: usize,
    warned_no_peer: AtomicBool,
}

impl Default for RequestExtractor {
    fn default() -> Self {
        Self {
            proxies: TrustedProxies::default(),
            viewer: ViewerHeaders::default(),
            shared_without_peer: false,
            max_uri: MAX_URI_PART,
            warned_no_peer: AtomicBool::new(false),
        }
    }
}

impl Clone for RequestExtractor {
    fn clone(&self) -> Self {
        Self {
            proxies: self.proxies.clone(),
            viewer: self.viewer.clone(),
            shared_without_peer: self.shared_without_peer,
            max_uri: self.max_uri,
            warned_no_peer: AtomicBool::new(self.warned_no_peer.load(Ordering::Relaxed)),
        }
    }
}

impl RequestExtractor {
    /// No trusted proxy, no viewer header.
    pub fn new() -> Self {
        Self::default()
    }

    /// The longest path, query and host, in bytes ([`MAX_URI_PART`],
    /// 16 KiB, unless set): the layer refuses longer ones with 414 (see
    /// [`TooLarge`]).
    #[must_use]
    pub fn max_uri_bytes(mut self, max: usize) -> Self {
        self.max_uri = max;
        self
    }

    /// Trusts these proxies for the client address.
    #[must_use]
    pub fn trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.proxies = proxies;
        self
    }

    /// Keys requests that carry no peer address as `0.0.0.0`, so that they
    /// all share one bucket, instead of the layer answering them 500. Only
    /// for a deliberate setup, such as a server whose every client comes
    /// through one proxy that hides it.
    #[must_use]
    pub fn shared_bucket_without_peer(mut self) -> Self {
        self.shared_without_peer = true;
        self
    }

    /// False when `req` carries no peer address ([`ClientIp`], axum's
    /// `ConnectInfo<SocketAddr>`, tonic's `TcpConnectInfo`, a `SocketAddr`) and
    /// [`shared_bucket_without_peer`](Self::shared_bucket_without_peer) is
    /// off: the layer then answers 500 instead of keying it as `0.0.0.0`.
    pub fn has_peer<B>(&self, req: &Request<B>) -> bool {
        self.accepts(find_peer(req))
    }

    /// [`RequestExtractor::has_peer`] for a peer address already looked up
    /// (see [`find_peer`]).
    pub(crate) fn accepts(&self, peer: Option<IpAddr>) -> bool {
        self.shared_without_peer || peer.is_some()
    }

    /// Reads these viewer headers.
    #[must_use]
    pub fn viewer_headers(mut self, viewer: ViewerHeaders) -> Self {
        self.viewer = viewer;
        self
    }

    /// The client address: the peer, or an address from the forwarding
    /// header when the peer is a trusted proxy. A line that is not UTF-8 is
    /// decoded lossily, not dropped: a client's bad bytes must not hide the
    /// entry a proxy appended.
    #[inline]
    fn client_ip(&self, headers: &HeaderMap, peer: IpAddr) -> IpAddr {
        // Without trusted proxies (the usual setup) nothing else to read.
        if self.proxies.is_none() {
            return peer.to_canonical();
        }
        self.forwarded_client_ip(headers, peer)
    }

    /// [`RequestExtractor::client_ip`] with trusted proxies.
    #[inline(never)]
    fn forwarded_client_ip(&self, headers: &HeaderMap, peer: IpAddr) -> IpAddr {
        if !self.proxies.trusts_peer(peer) {
            return peer.to_canonical();
        }
        let name = self.proxies.forwarded_header().header_name();
        let lines = headers
            .get_all(name)
            .into_iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()));
        self.proxies.client_ip_of(peer, lines)
    }

    /// The peer address found in the request (`find_peer`), or `0.0.0.0`.
    #[inline(always)]
    fn peer(&self, found: Option<IpAddr>) -> IpAddr {
        match found {
            Some(ip) => ip,
            None => self.unspecified_peer(),
        }
    }

    /// `0.0.0.0` for a request without a peer address, warned about once.
    #[cold]
    fn unspecified_peer(&self) -> IpAddr {
        if !self.warned_no_peer.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "ratelimit: no peer address in the request extensions; keying such requests \
                 as 0.0.0.0, one shared bucket (use ConnectInfo<SocketAddr> with axum, the \
                 `tonic` feature with tonic, or SetClientIp with hyper)"
            );
        }
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    }
}

/// The peer address: [`ClientIp`], axum's `ConnectInfo<SocketAddr>`
/// (feature `axum`), tonic's `TcpConnectInfo` (feature `tonic`), then a
/// plain `SocketAddr`.
#[inline]
pub(crate) fn find_peer<B>(req: &Request<B>) -> Option<IpAddr> {
    let ext = req.extensions();
    // `ClientIp` wins over the others. A request holding one extension
    // (axum's usual request: its peer) cannot hold a `ClientIp` beside
    // another source, so it looks for one last: its peer in one lookup.
    let alone = ext.len() == 1;
    if let Some(ClientIp(ip)) = (!alone).then(|| ext.get::<ClientIp>()).flatten() {
        return Some(*ip);
    }
    #[cfg(feature = "axum")]
    if let Some(info) = ext.get::<axum::extract::ConnectInfo<SocketAddr>>() {
        return Some(info.0.ip());
    }
    #[cfg(feature = "tonic")]
    if let Some(info) = ext.get::<tonic::transport::server::TcpConnectInfo>() {
        // `None` when the socket could not say (the connection was gone).
        if let Some(addr) = info.remote_addr() {
            return Some(addr.ip());
        }
    }
    if let Some(addr) = ext.get::<SocketAddr>() {
        return Some(addr.ip());
    }
    alone.then(|| ext.get::<ClientIp>()).flatten().map(|c| c.0)
}

/// Whether the request's extensions may hold more than the peer address
/// `found` in them ([`find_peer`]): when they hold nothing else, the
/// others ([`Cost`](crate::Cost) and the rest) need no lookup.
#[inline]
pub(crate) fn more_than_peer<B>(req: &Request<B>, found: Option<IpAddr>) -> bool {
    req.extensions().len() > usize::from(found.is_some())
}

mod address;
mod bounds;
mod host;
mod names;
#[cfg(test)]
mod tests;
mod view;

pub use view::HttpView;
