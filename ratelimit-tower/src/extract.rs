//! From an `http::Request` to the core's [`RequestAttrs`], bounded.
//!
//! - The client IP: the peer address from the extensions (see
//!   [`ClientIp`]), then [`TrustedProxies`]. The layer answers a request
//!   without any peer address 500 (see [`RequestExtractor::has_peer`]):
//!   serve axum with `into_make_service_with_connect_info::<SocketAddr>()`,
//!   or wrap a hyper service in [`SetClientIp`](crate::SetClientIp). Read
//!   here directly, or with
//!   [`shared_bucket_without_peer`](RequestExtractor::shared_bucket_without_peer),
//!   such a request is keyed as `0.0.0.0`: all of them share one bucket.
//! - Method, host (from `Host` or the URI's authority, without port,
//!   lower-cased), path and query; invalid UTF-8 is decoded lossily.
//! - Headers: for each header name its first value (the core keys on the
//!   first of repeated values), and every `Cookie` line (the cookie key
//!   looks across lines). Copied are at most [`MAX_HEADERS`] values and
//!   [`MAX_HEADER_BYTES`] bytes in all; a value longer than
//!   [`MAX_VALUE_BYTES`] is cut to that length. What falls outside is
//!   dropped, which a client could achieve by leaving it out anyway.
//! - Verified JWT claims from [`VerifiedClaims`], `app:` values from
//!   [`AppValues`].
//! - Country, ASN, JA4 and locale from the [`ViewerHeaders`] you name, off
//!   by default, and only read when the peer is a trusted proxy (or no proxy
//!   is configured: then the application vouches for its listeners).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};

use http::header::{HeaderName, COOKIE, HOST};
use http::{HeaderMap, Request};
use ratelimit_core::RequestAttrs;

use crate::{AppValues, ClientIp, Cost, TrustedProxies, VerifiedClaims};

/// Most header values copied per request.
pub const MAX_HEADERS: usize = 256;
/// Most header bytes (names and values) copied per request.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Longest header value copied; longer ones are cut.
pub const MAX_VALUE_BYTES: usize = 8 * 1024;
/// Longest path, query or host copied; longer ones are cut.
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

/// Builds [`RequestAttrs`] from requests; the layer holds one.
#[derive(Debug, Default)]
pub struct RequestExtractor {
    proxies: TrustedProxies,
    viewer: ViewerHeaders,
    shared_without_peer: bool,
    warned_no_peer: AtomicBool,
}

impl Clone for RequestExtractor {
    fn clone(&self) -> Self {
        Self {
            proxies: self.proxies.clone(),
            viewer: self.viewer.clone(),
            shared_without_peer: self.shared_without_peer,
            warned_no_peer: AtomicBool::new(self.warned_no_peer.load(Ordering::Relaxed)),
        }
    }
}

impl RequestExtractor {
    /// No trusted proxy, no viewer header.
    pub fn new() -> Self {
        Self::default()
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
    /// `ConnectInfo<SocketAddr>`, a `SocketAddr`) and
    /// [`shared_bucket_without_peer`](Self::shared_bucket_without_peer) is
    /// off: the layer then answers 500 instead of keying it as `0.0.0.0`.
    pub fn has_peer<B>(&self, req: &Request<B>) -> bool {
        self.shared_without_peer || find_peer(req).is_some()
    }

    /// Reads these viewer headers.
    #[must_use]
    pub fn viewer_headers(mut self, viewer: ViewerHeaders) -> Self {
        self.viewer = viewer;
        self
    }

    /// The attributes of `req`, with every header copied (within the
    /// bounds).
    pub fn extract<B>(&self, req: &Request<B>) -> RequestAttrs {
        self.extract_only(req, None)
    }

    /// The attributes of `req`, copying only the headers named in `only`
    /// (lower-case; see `Limiter::headers_used`), or all of them for `None`.
    pub fn extract_only<B>(&self, req: &Request<B>, only: Option<&[String]>) -> RequestAttrs {
        let headers = req.headers();
        let peer = self.peer(req);
        let lines = headers
            .get_all(self.proxies.forwarded_header().name())
            .iter()
            .map(|v| std::str::from_utf8(v.as_bytes()).unwrap_or("unknown"));
        let client_ip = self.proxies.client_ip(peer, lines);
        let mut attrs = RequestAttrs::blank(client_ip);
        attrs.method = req.method().as_str().to_owned();
        attrs.host = host(req);
        attrs.path = cut(req.uri().path(), MAX_URI_PART).to_owned();
        attrs.query = cut(req.uri().query().unwrap_or(""), MAX_URI_PART).to_owned();
        attrs.headers = match only {
            Some(names) => copy_named(headers, names),
            None => copy_headers(headers),
        };
        let ext = req.extensions();
        attrs.jwt_claims = ext.get::<VerifiedClaims>().map(|c| c.0.clone());
        if let Some(values) = ext.get::<AppValues>() {
            attrs.app_values = values.0.clone();
        }
        attrs.cost = ext.get::<Cost>().map(|c| c.0);
        if self.proxies.is_none() || self.proxies.trusts_peer(peer) {
            attrs.country = viewer(headers, self.viewer.country.as_ref());
            attrs.asnum = viewer(headers, self.viewer.asnum.as_ref());
            attrs.ja4 = viewer(headers, self.viewer.ja4.as_ref());
            attrs.locale = viewer(headers, self.viewer.locale.as_ref());
        }
        attrs
    }

    fn peer<B>(&self, req: &Request<B>) -> IpAddr {
        if let Some(ip) = find_peer(req) {
            return ip;
        }
        if !self.warned_no_peer.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "ratelimit: no peer address in the request extensions; keying such requests \
                 as 0.0.0.0, one shared bucket (use ConnectInfo<SocketAddr> with axum or \
                 SetClientIp with hyper)"
            );
        }
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    }
}

/// The peer address: [`ClientIp`], axum's `ConnectInfo<SocketAddr>`
/// (feature `axum`), then a plain `SocketAddr`.
fn find_peer<B>(req: &Request<B>) -> Option<IpAddr> {
    let ext = req.extensions();
    if let Some(ClientIp(ip)) = ext.get::<ClientIp>() {
        return Some(*ip);
    }
    #[cfg(feature = "axum")]
    if let Some(info) = ext.get::<axum::extract::ConnectInfo<SocketAddr>>() {
        return Some(info.0.ip());
    }
    ext.get::<SocketAddr>().map(SocketAddr::ip)
}

/// The longest prefix of `s` of at most `max` bytes, on a character boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

fn host<B>(req: &Request<B>) -> String {
    let raw = match req.headers().get(HOST) {
        Some(v) => String::from_utf8_lossy(v.as_bytes()),
        None => req.uri().host().unwrap_or("").into(),
    };
    let raw = cut(raw.trim(), MAX_URI_PART);
    let without_port = match raw.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(raw, |(h, _)| h),
        None => match raw.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => raw,
        },
    };
    without_port.to_ascii_lowercase()
}

fn copy_headers(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    copy(map, map.keys().map(HeaderName::as_str))
}

/// Copies the headers named in `names` only, within the same bounds.
fn copy_named(map: &HeaderMap, names: &[String]) -> Vec<(String, Vec<u8>)> {
    copy(map, names.iter().map(String::as_str))
}

/// Copies the first value of each named header, then the `Cookie` lines,
/// within the bounds: cookies come last so that a flood of them cannot
/// crowd out the other headers.
fn copy<'a>(map: &HeaderMap, names: impl Iterator<Item = &'a str>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    let mut cookies = false;
    for name in names {
        if name == COOKIE.as_str() {
            cookies = true;
            continue;
        }
        if let Some(v) = map.get(name) {
            push(&mut out, &mut budget, name, v.as_bytes());
        }
    }
    if cookies {
        for v in map.get_all(COOKIE) {
            push(&mut out, &mut budget, COOKIE.as_str(), v.as_bytes());
        }
    }
    out
}

fn push(out: &mut Vec<(String, Vec<u8>)>, budget: &mut usize, name: &str, value: &[u8]) {
    let value = value.get(..MAX_VALUE_BYTES).unwrap_or(value);
    let cost = name.len() + value.len();
    if out.len() < MAX_HEADERS && cost <= *budget {
        *budget -= cost;
        out.push((name.to_owned(), value.to_vec()));
    }
}

fn viewer(headers: &HeaderMap, name: Option<&HeaderName>) -> Option<String> {
    let value = headers.get(name?)?.as_bytes();
    let value = value.get(..MAX_VIEWER_VALUE).unwrap_or(value);
    let text = String::from_utf8_lossy(value);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests;
