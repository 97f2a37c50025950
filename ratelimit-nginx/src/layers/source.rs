//! What a zone key reads from an `http::Request`: the addresses, site, host,
//! method, path and headers, all known before the body is read.
//!
//! * The peer address (`$remote_addr`) is what the layer's `with_peer_addr`
//!   function finds, if one is set; else axum's `ConnectInfo<SocketAddr>`
//!   (feature `axum`), else a plain `SocketAddr` extension, else the
//!   [`ClientIp`] extension.
//! * `$client_ip` is the [`ClientIp`] extension (set by `SetClientIpLayer` or
//!   a trusted-proxy layer in front), else the peer address.
//! * `$site` is the [`SiteName`] request extension, or the layer's site.
//! * `$host` is the URI authority or the `Host` header.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::ClientIp;
//! use std::net::SocketAddr;
//!
//! let mut req = http::Request::new(());
//! req.extensions_mut().insert("10.0.0.2:51000".parse::<SocketAddr>().unwrap());
//! req.extensions_mut().insert(ClientIp("203.0.113.7".parse().unwrap()));
//! assert!(req.extensions().get::<ClientIp>().is_some());
//! ```

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::{Extensions, HeaderMap, Method, Request, Uri};
use ratelimit_core::ClientIp;

use crate::KeySource;

/// The site a request was routed to: `$site`.
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `SiteName(value)`; it has nothing to grow.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SiteName(pub Arc<str>);

/// Finds the peer address in a request's extensions (see
/// [`LimitReqLayer::with_peer_addr`](crate::LimitReqLayer::with_peer_addr)).
pub(crate) type PeerAddrFn = fn(&Extensions) -> Option<SocketAddr>;

/// The transport peer the server put in the extensions: axum's
/// `ConnectInfo<SocketAddr>` (feature `axum`), then a plain `SocketAddr`.
fn transport_peer(extensions: &Extensions) -> Option<IpAddr> {
    #[cfg(feature = "axum")]
    if let Some(info) = extensions.get::<axum::extract::ConnectInfo<SocketAddr>>() {
        return Some(info.0.ip());
    }
    extensions.get::<SocketAddr>().map(SocketAddr::ip)
}

/// How the layers read key variables from a request.
#[derive(Clone, Default)]
pub(crate) struct Extractor {
    /// An override of [`transport_peer`].
    pub(crate) peer_addr: Option<PeerAddrFn>,
    pub(crate) site: Option<Arc<str>>,
}

impl fmt::Debug for Extractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extractor")
            .field("custom_peer_addr", &self.peer_addr.is_some())
            .field("site", &self.site)
            .finish()
    }
}

impl Extractor {
    pub(crate) fn source<'a, B>(&'a self, req: &'a Request<B>) -> HttpSource<'a> {
        let extensions = req.extensions();
        let transport = match self.peer_addr {
            Some(find) => find(extensions).map(|a| a.ip()),
            None => transport_peer(extensions),
        };
        let client = extensions.get::<ClientIp>().map(|c| c.0);
        HttpSource {
            method: req.method(),
            uri: req.uri(),
            headers: req.headers(),
            client_ip: client.or(transport),
            peer: transport.or(client),
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

impl HttpSource<'_> {
    /// True when no address of the client was found at all.
    pub(crate) fn lacks_address(&self) -> bool {
        self.client_ip.is_none()
    }

    /// Uses `ip` as both `$client_ip` and `$remote_addr`.
    pub(crate) fn set_address(&mut self, ip: IpAddr) {
        self.client_ip = Some(ip);
        self.peer = Some(ip);
    }
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
    use crate::KeyTemplate;

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
