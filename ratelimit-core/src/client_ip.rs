//! [`ClientIp`]: the client address of a request, as a request extension.
//!
//! One type for every HTTP layer of the workspace: `ratelimit-tower`'s
//! `RateLimitLayer` and the `limit_req` / `limit_conn` layers of
//! `ratelimit-nginx` all read it, so one `SetClientIpLayer` (or a
//! trusted-proxy layer) in front serves them all. It is a plain value with
//! no HTTP dependency: put it in `http::Request::extensions_mut()`.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::ClientIp;
//! use std::net::IpAddr;
//!
//! let ip: IpAddr = "203.0.113.7".parse().unwrap();
//! let ext = ClientIp(ip);
//! assert_eq!(ext.0, ip);
//! assert_eq!(ClientIp::from(ip), ext);
//! ```

use std::net::IpAddr;

/// The address of the client: the connection's peer, or the address a
/// trusted-proxy layer in front chose. Layers look for it before axum's
/// `ConnectInfo<SocketAddr>` and a plain `SocketAddr` extension.
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `ClientIp(value)`; it has nothing to grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientIp(pub IpAddr);

impl From<IpAddr> for ClientIp {
    fn from(ip: IpAddr) -> Self {
        Self(ip)
    }
}
