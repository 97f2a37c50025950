//! [`AddressView`]: the request as rules that read only its client address
//! (and its cost) see it, for the core's compiled plan
//! (`Snapshot::reads_address_only`): the same address as [`HttpView`]'s,
//! through the same trusted-proxy logic, and the same bounds first, without
//! building the rest of the view.
//!
//! [`HttpView`]: super::HttpView

use std::net::IpAddr;

use http::Request;
use ratelimit_core::RequestView;

use super::view::uri_too_large;
use super::{host, more_than_peer, RequestExtractor, TooLarge};
use crate::Cost;

/// The client address and the cost of a request, what a set of rules that
/// reads nothing else needs; every other part reads as absent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AddressView {
    client_ip: IpAddr,
    cost: Option<u64>,
}

impl RequestExtractor {
    /// [`RequestExtractor::try_view_at`] for rules that read only the
    /// client address and the cost (and no header): the same bounds (414 /
    /// 431), the same address, the same cost.
    #[inline(always)]
    pub(crate) fn try_address_at<B>(
        &self,
        req: &Request<B>,
        peer: Option<IpAddr>,
    ) -> Result<AddressView, TooLarge> {
        let headers = req.headers();
        let uri = req.uri();
        let authority = uri.authority();
        // The path and the query are each at most as long as the two
        // together: split only when those are longer than the bound.
        let whole = uri.path_and_query().map_or(0, |pq| pq.as_str().len());
        let (path, query) = match whole > self.max_uri {
            true => (uri.path(), uri.query().unwrap_or("")),
            false => ("", ""),
        };
        let host_len = || host::host(authority, headers).len();
        if let Some(e) = uri_too_large(path, query, authority, headers, self.max_uri, host_len) {
            return Err(e);
        }
        // Extensions holding the peer's address alone hold no `Cost`.
        let cost = match more_than_peer(req, peer) {
            true => req.extensions().get::<Cost>().map(|c| c.0),
            false => None,
        };
        let peer = self.peer(peer);
        Ok(AddressView {
            client_ip: self.client_ip(headers, peer),
            cost,
        })
    }
}

impl RequestView for AddressView {
    fn client_ip(&self) -> IpAddr {
        self.client_ip
    }

    fn method(&self) -> &str {
        ""
    }

    fn host(&self) -> &str {
        ""
    }

    fn path(&self) -> &str {
        ""
    }

    fn query(&self) -> &str {
        ""
    }

    fn header(&self, _name: &str) -> Option<&[u8]> {
        None
    }

    fn for_each_header_value<'a>(
        &'a self,
        _name: &str,
        _f: &mut dyn FnMut(&'a [u8]) -> std::ops::ControlFlow<()>,
    ) {
    }

    fn cost(&self) -> Option<u64> {
        self.cost
    }
}
