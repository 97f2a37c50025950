//! What a zone key reads from an `http::Request`: the addresses, site, host,
//! method, path and headers, all known before the body is read.
//!
//! * `$client_ip` is the [`ClientIp`] request extension, set by a trusted-proxy
//!   (realip) layer in front, or else the peer address.
//! * `$remote_addr` is the peer: the [`PeerAddr`] or `SocketAddr` request
//!   extension by default, or what the layer's `with_peer_addr` function finds
//!   (such as axum's `ConnectInfo<SocketAddr>`).
//! * `$site` is the [`SiteName`] request extension, or the layer's site.
//! * `$host` is the URI authority or the `Host` header.
//!
//! # Examples
//!
//! ```
//! use ratelimit_tower::nginx::{ClientIp, PeerAddr};
//! use std::net::SocketAddr;
//!
//! let mut req = http::Request::new(());
//! req.extensions_mut().insert(PeerAddr("10.0.0.2:51000".parse::<SocketAddr>().unwrap()));
//! req.extensions_mut().insert(ClientIp("203.0.113.7".parse().unwrap()));
//! assert!(req.extensions().get::<ClientIp>().is_some());
//! ```

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::{Extensions, HeaderMap, Method, Request, Uri};
use ratelimit_core::nginx::KeySource;

/// The client address chosen by a trusted-proxy layer: `$client_ip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientIp(pub IpAddr);

/// The TCP peer of the connection: `$remote_addr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerAddr(pub SocketAddr);

/// The site a request was routed to: `$site`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SiteName(pub Arc<str>);

/// Finds the peer address in a request's extensions.
pub type PeerAddrFn = fn(&Extensions) -> Option<SocketAddr>;

/// The default [`PeerAddrFn`]: a [`PeerAddr`] or a `SocketAddr` extension.
pub fn default_peer_addr(extensions: &Extensions) -> Option<SocketAddr> {
    extensions
        .get::<PeerAddr>()
        .map(|p| p.0)
        .or_else(|| extensions.get::<SocketAddr>().copied())
}

/// How the layers read key variables from a request.
#[derive(Clone)]
pub(crate) struct Extractor {
    pub(crate) peer_addr: PeerAddrFn,
    pub(crate) site: Option<Arc<str>>,
}

impl Default for Extractor {
    fn default() -> Self {
        Self {
            peer_addr: default_peer_addr,
            site: None,
        }
    }
}

impl fmt::Debug for Extractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extractor")
            .field("site", &self.site)
            .finish_non_exhaustive()
    }
}

impl Extractor {
    pub(crate) fn source<'a, B>(&'a self, req: &'a Request<B>) -> HttpSource<'a> {
        let extensions = req.extensions();
        let peer = (self.peer_addr)(extensions).map(|a| a.ip());
        HttpSource {
            method: req.method(),
            uri: req.uri(),
            headers: req.headers(),
            client_ip: extensions.get::<ClientIp>().map(|c| c.0).or(peer),
            peer,
            site: extensions
                .get::<SiteName>()
                .map(|s| &*s.0)
                .or(self.site.as_deref()),
        }
    }
}

/// A [`KeySource`] over the head of an `http::Request`.
#[derive(Debug)]
pub(crate) struct HttpSource<'a> {
    method: &'a Method,
    uri: &'a Uri,
    headers: &'a HeaderMap,
    client_ip: Option<IpAddr>,
    peer: Option<IpAddr>,
    site: Option<&'a str>,
}

impl KeySource for HttpSource<'_> {
    fn client_ip(&self) -> Option<IpAddr> {
        self.client_ip
    }

    fn remote_addr(&self) -> Option<IpAddr> {
        self.peer
    }

    fn site(&self) -> Option<&str> {
        self.site
    }

    fn host(&self) -> &str {
        match self.uri.authority() {
            Some(a) => a.as_str().rsplit('@').next().unwrap_or(""),
            None => self
                .headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or(""),
        }
    }

    fn method(&self) -> &str {
        self.method.as_str()
    }

    fn path(&self) -> &[u8] {
        self.uri.path().as_bytes()
    }

    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.get(name).map(|v| v.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelimit_core::nginx::KeyTemplate;

    fn render(key: &str, req: &Request<()>, extractor: &Extractor) -> String {
        let key = KeyTemplate::parse(key).expect("key");
        String::from_utf8_lossy(&key.render(&extractor.source(req))).into_owned()
    }

    #[test]
    fn client_ip_prefers_the_realip_extension_and_falls_back_to_the_peer() {
        let mut req = Request::new(());
        let e = Extractor::default();
        assert_eq!(render("$client_ip|$remote_addr", &req, &e), "|");
        req.extensions_mut()
            .insert("10.0.0.2:5000".parse::<SocketAddr>().expect("addr"));
        assert_eq!(
            render("$client_ip|$remote_addr", &req, &e),
            "10.0.0.2|10.0.0.2"
        );
        req.extensions_mut()
            .insert(ClientIp("203.0.113.7".parse().expect("ip")));
        assert_eq!(
            render("$client_ip|$remote_addr", &req, &e),
            "203.0.113.7|10.0.0.2"
        );
    }

    #[test]
    fn host_path_method_headers_and_site_come_from_the_head() {
        let mut req = Request::builder()
            .method("POST")
            .uri("/a/./b%2Fc?x=1")
            .header("host", "Example.com:8080")
            .header("x-tenant", "acme")
            .header("x-tenant", "other")
            .body(())
            .expect("request");
        let e = Extractor {
            site: Some("default".into()),
            ..Extractor::default()
        };
        let key = "$method $host $path $http_x_tenant $site";
        assert_eq!(
            render(key, &req, &e),
            "POST example.com /a/b/c acme default"
        );
        req.extensions_mut().insert(SiteName("shop".into()));
        *req.uri_mut() = "http://user@Other.example/".parse().expect("uri");
        assert_eq!(render("$host $site", &req, &e), "other.example shop");
    }
}
