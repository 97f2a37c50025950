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

use ratelimit_core::Cidr;

use chain::Chain;
pub use header::{ForwardedHeader, MAX_CHAIN};
#[cfg(test)]
use node::parse_node;

mod chain;
mod header;
mod node;

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

#[cfg(test)]
mod tests;
