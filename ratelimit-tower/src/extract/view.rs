//! [`HttpView`]: the core's [`RequestView`] borrowed from an
//! `http::Request`, what the layer checks.
//!
//! Method, path, query, headers, claims and application values are read in
//! place (claims and application values looked up in the extensions when a
//! rule reads them); only what has to be normalized is computed, once: the
//! client address when the view is built, the viewer facts (borrowed unless
//! not UTF-8) and the host (borrowed unless it has upper-case letters or is
//! not UTF-8) when a rule first reads them, the host also when it may be
//! too long.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::ControlFlow;
use std::sync::{Arc, OnceLock};

use http::header::HeaderName;
use http::uri::Authority;
use http::{Extensions, HeaderMap, HeaderValue, Request};
use ratelimit_core::{RequestView, ViewerFact};

use super::bounds::Firsts;
use super::names::Names;
use super::{
    bounds, find_peer, host, more_than_peer, RequestExtractor, TooLarge, MAX_VIEWER_VALUE,
};
use crate::{AppValues, Cost, VerifiedClaims};

/// A request as the rules read it, borrowed from an `http::Request`: see
/// [`RequestExtractor::view`].
///
/// # Examples
///
/// ```
/// use ratelimit_core::RequestView;
/// use ratelimit_tower::{ClientIp, RequestExtractor};
///
/// let req = http::Request::builder()
///     .uri("/login?user=ann")
///     .header("host", "API.example.com:8443")
///     .extension(ClientIp("203.0.113.7".parse().unwrap()))
///     .body(())
///     .unwrap();
/// let view = RequestExtractor::new().view(&req);
/// assert_eq!(view.host(), "api.example.com");
/// assert_eq!(view.path(), "/login");
/// assert_eq!(view.query_arg("user").as_deref(), Some("ann"));
/// ```
#[derive(Debug)]
pub struct HttpView<'r> {
    client_ip: IpAddr,
    method: &'r str,
    /// Normalized when a rule first reads it (most rules never do).
    host: OnceLock<Cow<'r, str>>,
    /// The request target's authority, which wins over the `Host` header.
    authority: Option<&'r Authority>,
    path: &'r str,
    query: &'r str,
    headers: &'r HeaderMap,
    /// Claims and application values are looked up here when a rule reads
    /// them (most rules never do).
    extensions: &'r Extensions,
    /// Values of the layer's key extractors: before the `AppValues` ones.
    derived: Vec<(String, String)>,
    cost: Option<u64>,
    /// Country, ASN, JA4, locale: the headers' values, when the peer may
    /// vouch for them; decoded when a rule reads them.
    viewer: [Option<&'r HeaderValue>; 4],
    /// The viewer facts decoded lossily, once one of them is not UTF-8.
    viewer_lossy: OnceLock<Box<[Option<String>; 4]>>,
    /// The names the rules read, parsed (from `try_view`).
    names: Option<Arc<Names>>,
    /// Their first values, as the bounds found them (from `try_view`).
    firsts: Firsts<'r>,
}

impl RequestExtractor {
    /// The request as the rules read it, borrowed: nothing is copied and
    /// nothing is cut (see [`RequestExtractor::try_view`] for the bounds).
    pub fn view<'r, B>(&self, req: &'r Request<B>) -> HttpView<'r> {
        self.view_at(req, find_peer(req))
    }

    /// [`RequestExtractor::view`] with the peer address already looked up.
    fn view_at<'r, B>(&self, req: &'r Request<B>, peer: Option<IpAddr>) -> HttpView<'r> {
        self.view_with(req, Target::of(req), peer, None, Firsts::default())
    }

    /// The view, with the parsed names of the headers the rules read and
    /// their first values.
    #[inline(always)]
    fn view_with<'r, B>(
        &self,
        req: &'r Request<B>,
        target: Target<'r>,
        peer: Option<IpAddr>,
        names: Option<Arc<Names>>,
        firsts: Firsts<'r>,
    ) -> HttpView<'r> {
        let headers = req.headers();
        // Extensions holding the peer's address alone hold no `Cost`.
        let more = more_than_peer(req, peer);
        let peer = self.peer(peer);
        let client_ip = self.client_ip(headers, peer);
        let ext = req.extensions();
        let viewer = match self.viewer.is_empty() {
            true => [None; 4],
            false => self.viewer_facts(headers, peer),
        };
        HttpView {
            client_ip,
            method: req.method().as_str(),
            host: OnceLock::new(),
            authority: target.authority,
            path: target.path,
            query: target.query,
            headers,
            extensions: ext,
            derived: Vec::new(),
            cost: more.then(|| ext.get::<Cost>().map(|c| c.0)).flatten(),
            viewer,
            viewer_lossy: OnceLock::new(),
            names,
            firsts,
        }
    }

    /// Country, ASN, JA4 and locale from the viewer headers, when the peer
    /// may vouch for them (see [`RequestExtractor::viewer_headers`]).
    fn viewer_facts<'r>(
        &self,
        headers: &'r HeaderMap,
        peer: IpAddr,
    ) -> [Option<&'r HeaderValue>; 4] {
        let mut viewer = [None; 4];
        if self.proxies.is_none() || self.proxies.trusts_peer(peer) {
            let v = &self.viewer;
            let names = [&v.country, &v.asnum, &v.ja4, &v.locale];
            for (slot, name) in viewer.iter_mut().zip(names) {
                *slot = name.as_ref().and_then(|name| headers.get(name));
            }
        }
        viewer
    }

    /// The request as the rules read it, or why it is refused before any
    /// rule runs (what the layer does): a path, query or host longer than
    /// [`RequestExtractor::max_uri_bytes`], or the headers named in `only`
    /// (the headers the rules read, `Snapshot::headers_used`) beyond the
    /// bounds of [`extract`](crate::extract) ([`MAX_HEADERS`](super::MAX_HEADERS),
    /// [`MAX_HEADER_BYTES`](super::MAX_HEADER_BYTES),
    /// [`MAX_VALUE_BYTES`](super::MAX_VALUE_BYTES)).
    ///
    /// # Errors
    ///
    /// [`TooLarge`]: the part that is too long.
    pub fn try_view<'r, B>(
        &self,
        req: &'r Request<B>,
        only: &[String],
    ) -> Result<HttpView<'r>, TooLarge> {
        self.try_view_at(req, only, find_peer(req))
    }

    /// [`RequestExtractor::try_view`] with the peer address already looked
    /// up (see [`find_peer`]). The bounds are checked first, so that the
    /// view is built where it is returned (a move would copy it).
    pub(crate) fn try_view_at<'r, B>(
        &self,
        req: &'r Request<B>,
        only: &[String],
        peer: Option<IpAddr>,
    ) -> Result<HttpView<'r>, TooLarge> {
        let headers = req.headers();
        // Read once, for the bounds and the view.
        let target = Target::of(req);
        let host_len = || host::host(target.authority, headers).len();
        let too_large = uri_too_large(
            target.path,
            target.query,
            target.authority,
            headers,
            self.max_uri,
            host_len,
        );
        if let Some(e) = too_large {
            return Err(e);
        }
        // Most rule sets read no header: nothing to parse or bound.
        let mut names = None;
        let mut firsts = Firsts::default();
        if let Some(parsed) = (!only.is_empty()).then(|| Names::of(only)).flatten() {
            if !bounds::fits_named(headers, &parsed, &mut firsts) {
                return Err(TooLarge::Headers);
            }
            names = Some(parsed);
        }
        Ok(self.view_with(req, target, peer, names, firsts))
    }
}

/// The request target's parts the rules read.
#[derive(Clone, Copy)]
pub(super) struct Target<'r> {
    pub(super) authority: Option<&'r Authority>,
    pub(super) path: &'r str,
    pub(super) query: &'r str,
}

impl<'r> Target<'r> {
    #[inline(always)]
    pub(super) fn of<B>(req: &'r Request<B>) -> Self {
        let uri = req.uri();
        Self {
            authority: uri.authority(),
            path: uri.path(),
            query: uri.query().unwrap_or(""),
        }
    }
}

/// A path, query or host longer than `max`: 414, or 431 for a host from
/// the `Host` header. `host_len` is the normalized host's length, asked only
/// when the raw one may be too long.
pub(super) fn uri_too_large(
    path: &str,
    query: &str,
    authority: Option<&Authority>,
    headers: &HeaderMap,
    max: usize,
    host_len: impl FnOnce() -> usize,
) -> Option<TooLarge> {
    if path.len() > max || query.len() > max {
        Some(TooLarge::Uri)
    } else if host::longest(authority, headers) > max && host_len() > max {
        Some(match authority {
            Some(_) => TooLarge::Uri,
            None => TooLarge::Headers,
        })
    } else {
        None
    }
}

impl<'r> HttpView<'r> {
    /// Puts the key extractors' values in front of the `AppValues` ones.
    pub(crate) fn set_derived(&mut self, derived: Vec<(String, String)>) {
        self.derived = derived;
    }

    /// The normalized host, read once.
    fn host_str(&self) -> &str {
        self.host
            .get_or_init(|| host::host(self.authority, self.headers))
    }

    /// `name` parsed, when it is one the rules read.
    fn parsed(&self, name: &str) -> Option<&HeaderName> {
        self.names.as_deref()?.get(name)
    }

    fn claims(&self) -> Option<&'r BTreeMap<String, String>> {
        self.extensions.get::<VerifiedClaims>().map(|c| &c.0)
    }

    fn app_values(&self) -> &'r [(String, String)] {
        (self.extensions.get::<AppValues>()).map_or(&[], |v| v.0.as_slice())
    }
}

impl RequestView for HttpView<'_> {
    fn client_ip(&self) -> IpAddr {
        self.client_ip
    }

    fn method(&self) -> &str {
        self.method
    }

    fn host(&self) -> &str {
        self.host_str()
    }

    fn path(&self) -> &str {
        self.path
    }

    fn query(&self) -> &str {
        self.query
    }

    fn header(&self, name: &str) -> Option<&[u8]> {
        let found = self.names.as_deref().and_then(|n| n.position(name));
        // The bounds' walk looked it up already.
        let first = found.and_then(|(i, _)| self.firsts.get(i));
        let value = match (first, found) {
            (Some(first), _) => first,
            (None, Some((_, Some(parsed)))) => self.headers.get(parsed),
            (None, _) => self.headers.get(name),
        };
        value.map(|v| v.as_bytes())
    }

    fn for_each_header_value<'a>(
        &'a self,
        name: &str,
        each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
    ) {
        let values = match self.parsed(name) {
            Some(parsed) => self.headers.get_all(parsed),
            None => self.headers.get_all(name),
        };
        for v in values {
            if each(v.as_bytes()).is_break() {
                return;
            }
        }
    }

    fn jwt_claim(&self, name: &str) -> Option<&str> {
        self.claims()?.get(name).map(String::as_str)
    }

    fn viewer(&self, fact: ViewerFact) -> Option<&str> {
        let i = match fact {
            ViewerFact::Country => 0,
            ViewerFact::Asnum => 1,
            ViewerFact::Ja4 => 2,
            ViewerFact::Locale => 3,
            _ => return None,
        };
        match viewer_text(self.viewer[i]?) {
            Ok(text) => text,
            Err(_) => {
                let lossy = self
                    .viewer_lossy
                    .get_or_init(|| Box::new(self.viewer.map(|v| v.and_then(viewer_text_lossy))));
                lossy[i].as_deref()
            }
        }
    }

    fn app_value(&self, name: &str) -> Option<&str> {
        let named = |(n, _): &&(String, String)| n == name;
        let (_, value) = match self.derived.iter().find(named) {
            Some(derived) => derived,
            // The extension is looked up only when no key extractor gave
            // the value.
            None => self.app_values().iter().find(named)?,
        };
        Some(value)
    }

    fn cost(&self) -> Option<u64> {
        self.cost
    }
}

/// A viewer header's value: at most [`MAX_VIEWER_VALUE`] bytes, trimmed;
/// `None` when blank; `Err` when not UTF-8 (see [`viewer_text_lossy`]).
fn viewer_text(value: &HeaderValue) -> Result<Option<&str>, std::str::Utf8Error> {
    let text = std::str::from_utf8(viewer_bytes(value))?.trim();
    Ok((!text.is_empty()).then_some(text))
}

/// [`viewer_text`] decoded lossily.
fn viewer_text_lossy(value: &HeaderValue) -> Option<String> {
    let text = String::from_utf8_lossy(viewer_bytes(value));
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The first [`MAX_VIEWER_VALUE`] bytes of a viewer header's value.
fn viewer_bytes(value: &HeaderValue) -> &[u8] {
    let value = value.as_bytes();
    value.get(..MAX_VIEWER_VALUE).unwrap_or(value)
}

#[cfg(test)]
mod tests;
