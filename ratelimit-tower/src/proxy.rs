//! Trusted proxies: which address is the client's when requests come through
//! load balancers or CDNs.
//!
//! A forwarding header is only read when the connection comes from a trusted
//! proxy, and then **from the right**: each trusted proxy appends the address
//! it received the request from, so the entries on the right were written by
//! proxies you run and the leftmost one by whoever sent the request. The
//! leftmost value is never taken blindly.
//!
//! - [`TrustedProxies::none`] (the default): forwarding headers are ignored,
//!   the client is the connection's peer.
//! - [`TrustedProxies::hops`]`(n)`: `n` proxies in front of the service; the
//!   client is the `n`th entry from the right (with one hop, the rightmost).
//! - [`TrustedProxies::cidrs`]: the peer must be in one of the ranges; then
//!   entries inside the ranges are skipped from the right and the first one
//!   outside is the client.
//!
//! `X-Forwarded-For` is a plain comma-separated list (it has no quoted
//! strings); `Forwarded` elements may quote their values, and an element
//! whose quote is never closed is broken on its own: what a proxy appended
//! after it is still read. Empty entries are left out. An entry that cannot
//! be read (`unknown`, an obfuscated `_id`, garbage) stops the walk: the
//! client is then the nearest address known, the last trusted hop. So a
//! client's own bytes, written to the left of what your proxies append,
//! can never make the proxy the client. A chain shorter than expected gives
//! its leftmost entry. At most [`MAX_CHAIN`] entries are looked at.
//!
//! # Examples
//!
//! ```
//! use ratelimit_tower::{Cidr, TrustedProxies};
//!
//! let peer = "10.0.0.2".parse().unwrap();
//! let proxies = TrustedProxies::cidrs(["10.0.0.0/8".parse::<Cidr>().unwrap()]);
//! // A client-written first entry is skipped over: the proxy saw 203.0.113.9.
//! let ip = proxies.client_ip(peer, ["198.51.100.1, 203.0.113.9"]);
//! assert_eq!(ip, "203.0.113.9".parse::<std::net::IpAddr>().unwrap());
//! ```

use std::net::IpAddr;

use http::header::HeaderName;
use ratelimit_core::Cidr;

use chain::Chain;

mod chain;

/// `X-Forwarded-For`, parsed once.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// Most forwarding entries looked at, from the right.
pub const MAX_CHAIN: usize = 64;

/// Which forwarding header carries the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`.
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for="[2001:db8::1]:4711"`.
    Forwarded,
}

impl ForwardedHeader {
    /// The header's (lower-case) name.
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        }
    }

    /// The header's name, parsed.
    pub(crate) fn header_name(self) -> HeaderName {
        match self {
            ForwardedHeader::XForwardedFor => X_FORWARDED_FOR,
            ForwardedHeader::Forwarded => http::header::FORWARDED,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Trust {
    #[default]
    None,
    Hops(usize),
    Cidrs(Vec<Cidr>),
}

/// Which proxies in front of the service are trusted to say who the client is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustedProxies {
    trust: Trust,
    header: ForwardedHeader,
}

impl TrustedProxies {
    /// No trusted proxy: the client is the connection's peer.
    pub fn none() -> Self {
        Self::default()
    }

    /// `n` proxies in front of the service, each appending the address it
    /// saw; `0` is the same as [`TrustedProxies::none`].
    pub fn hops(n: usize) -> Self {
        let trust = match n {
            0 => Trust::None,
            n => Trust::Hops(n.min(MAX_CHAIN)),
        };
        Self {
            trust,
            header: ForwardedHeader::default(),
        }
    }

    /// Proxies whose addresses are in `ranges`.
    pub fn cidrs(ranges: impl IntoIterator<Item = Cidr>) -> Self {
        Self {
            trust: Trust::Cidrs(ranges.into_iter().collect()),
            header: ForwardedHeader::default(),
        }
    }

    /// Reads `header` instead of `X-Forwarded-For`.
    #[must_use]
    pub fn header(mut self, header: ForwardedHeader) -> Self {
        self.header = header;
        self
    }

    /// The forwarding header read.
    pub fn forwarded_header(&self) -> ForwardedHeader {
        self.header
    }

    /// Whether forwarding headers are read at all.
    #[inline]
    pub fn is_none(&self) -> bool {
        matches!(self.trust, Trust::None)
    }

    /// Whether the connection's `peer` is a trusted proxy (always with
    /// `hops`, never with `none`, inside a range with `cidrs`).
    #[inline]
    pub fn trusts_peer(&self, peer: IpAddr) -> bool {
        match &self.trust {
            Trust::None => false,
            Trust::Hops(_) => true,
            Trust::Cidrs(nets) => {
                let peer = peer.to_canonical();
                nets.iter().any(|n| n.contains(peer))
            }
        }
    }

    /// The client's address, from the connection's `peer` and the values of
    /// every line of the forwarding header, in arrival order.
    pub fn client_ip<'a>(&self, peer: IpAddr, lines: impl IntoIterator<Item = &'a str>) -> IpAddr {
        self.client_ip_of(peer, lines)
    }

    /// [`TrustedProxies::client_ip`] for lines of any string type (the
    /// layer's are decoded lossily, borrowed when UTF-8).
    pub(crate) fn client_ip_of<L: AsRef<str>>(
        &self,
        peer: IpAddr,
        lines: impl IntoIterator<Item = L>,
    ) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts_peer(peer) {
            return peer;
        }
        let chain = Chain::rightmost(lines, self.header);
        let mut nearest = peer;
        for (i, entry) in chain.rightmost_first().enumerate() {
            let Some(ip) = entry.map(|ip| ip.to_canonical()) else {
                return nearest;
            };
            let trusted = match &self.trust {
                Trust::None => false,
                Trust::Hops(n) => i + 1 < *n,
                Trust::Cidrs(nets) => nets.iter().any(|n| n.contains(ip)),
            };
            if !trusted {
                return ip;
            }
            nearest = ip;
        }
        nearest
    }
}

/// One node: `1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]`, `[2001:db8::1]:80`,
/// `2001:db8::1`, any of them in quotes. `unknown` and `_obfuscated` are not
/// addresses.
pub(crate) fn parse_node(node: &str) -> Option<IpAddr> {
    let mut s = node.trim();
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        s = inner.trim();
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (addr, tail) = rest.split_once(']')?;
        if !(tail.is_empty() || is_port(tail.strip_prefix(':')?)) {
            return None;
        }
        return addr.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let (addr, port) = s.rsplit_once(':')?;
    if !is_port(port) {
        return None;
    }
    addr.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// A port: digits, or an obfuscated `_port` (RFC 7239).
fn is_port(p: &str) -> bool {
    let digits = (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    let obfuscated = p.len() > 1
        && p.starts_with('_')
        && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    digits || obfuscated
}

#[cfg(test)]
mod tests;
