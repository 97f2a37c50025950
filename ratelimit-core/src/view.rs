//! [`RequestView`]: what the rules read from one request, borrowed from
//! wherever the request lives.
//!
//! The limiter, expressions, keys and allow lists read a request through
//! this trait only. [`RequestAttrs`] implements it (owned attributes, for
//! callers without an HTTP request), and so does the tower layer's borrowed
//! view over an `http::Request`, which copies nothing per request: a rule
//! reads the header, path or query in place.
//!
//! An implementation gives each field already normalized (the host
//! lower-cased, without port; the client address after trusted-proxy
//! selection) and header names are looked up in lower case. Query arguments
//! and cookies are provided on top of [`RequestView::query`] and the
//! `Cookie` header lines.
//!
//! # Examples
//!
//! ```
//! use std::net::IpAddr;
//! use std::ops::ControlFlow;
//! use ratelimit_core::{Limiter, RequestView};
//! use ratelimit_core::rules::RuleSet;
//!
//! /// A request that lives in the caller's own types.
//! struct Mine<'a> {
//!     ip: IpAddr,
//!     path: &'a str,
//!     tenant: Option<&'a str>,
//! }
//!
//! impl RequestView for Mine<'_> {
//!     fn client_ip(&self) -> IpAddr { self.ip }
//!     fn method(&self) -> &str { "GET" }
//!     fn host(&self) -> &str { "example.com" }
//!     fn path(&self) -> &str { self.path }
//!     fn query(&self) -> &str { "" }
//!     fn header(&self, name: &str) -> Option<&[u8]> {
//!         (name == "x-tenant").then_some(self.tenant?.as_bytes())
//!     }
//!     fn for_each_header_value<'a>(
//!         &'a self,
//!         name: &str,
//!         each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
//!     ) {
//!         if let Some(v) = self.header(name) {
//!             let _ = each(v);
//!         }
//!     }
//! }
//!
//! let rules = RuleSet::from_json(r#"[{"id": "per-tenant", "algorithm": "fixed_window",
//!     "expression": "http.request.uri.path eq \"/api\"", "limit": 1, "period": "1m",
//!     "key": ["ip", "header:x-tenant"]}]"#).unwrap();
//! let limiter = Limiter::new(rules);
//! let req = Mine { ip: "203.0.113.7".parse().unwrap(), path: "/api", tenant: Some("acme") };
//! assert!(limiter.check(&req).into_ready().unwrap().is_forward());
//! assert!(!limiter.check(&req).into_ready().unwrap().is_forward());
//! ```

use std::borrow::Cow;
use std::net::IpAddr;
use std::ops::ControlFlow;

use crate::request::{cookie_in, query_arg_bytes_in, query_arg_in};
use crate::RequestAttrs;

/// A fact about the viewer that a trusted CDN or proxy vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViewerFact {
    /// The viewer's country.
    Country,
    /// The viewer's autonomous system number.
    Asnum,
    /// The viewer's TLS fingerprint (JA4).
    Ja4,
    /// The viewer's locale.
    Locale,
}

/// Everything the rules can read from one request, borrowed.
///
/// Required: the client address, method, host, path, query and headers.
/// Claims, viewer facts, application values and the cost default to
/// missing. The query-argument and cookie methods are provided over
/// [`query`](RequestView::query) and the `Cookie` lines; implementations
/// have no reason to override them.
pub trait RequestView {
    /// The client address, after trusted-proxy selection.
    fn client_ip(&self) -> IpAddr;

    /// The method, such as `GET`.
    fn method(&self) -> &str;

    /// The host: lower-case, without port and trailing dot.
    fn host(&self) -> &str;

    /// The path, without the query.
    fn path(&self) -> &str;

    /// The raw query string, without the `?`.
    fn query(&self) -> &str;

    /// The first value of header `name` (lower-case).
    fn header(&self, name: &str) -> Option<&[u8]>;

    /// Calls `each` with every value of header `name` (lower-case), in
    /// order, until it breaks.
    fn for_each_header_value<'a>(
        &'a self,
        name: &str,
        each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
    );

    /// A claim of a verified token; `None` without one.
    fn jwt_claim(&self, name: &str) -> Option<&str> {
        let _ = name;
        None
    }

    /// A fact about the viewer from a trusted header; `None` when unknown.
    fn viewer(&self, fact: ViewerFact) -> Option<&str> {
        let _ = fact;
        None
    }

    /// An application-supplied value (`app:<name>`), the first of that name.
    fn app_value(&self, name: &str) -> Option<&str> {
        let _ = name;
        None
    }

    /// What the application charges this request (every rule but
    /// `distinct`); `None` uses each rule's `cost`.
    fn cost(&self) -> Option<u64> {
        None
    }

    /// The first value of query argument `name`, percent-decoded (lossily
    /// to UTF-8).
    fn query_arg(&self, name: &str) -> Option<Cow<'_, str>> {
        query_arg_in(self.query(), name)
    }

    /// The first value of query argument `name`, percent-decoded to its
    /// bytes.
    fn query_arg_bytes(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        query_arg_bytes_in(self.query(), name)
    }

    /// The first cookie called `name`, over every `Cookie` line in order.
    fn cookie(&self, name: &str) -> Option<&[u8]> {
        let mut found = None;
        self.for_each_header_value("cookie", &mut |line| match cookie_in(line, name) {
            Some(v) => {
                found = Some(v);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        });
        found
    }
}

/// The owned attributes, as they are.
impl RequestView for RequestAttrs {
    fn client_ip(&self) -> IpAddr {
        self.client_ip
    }

    fn method(&self) -> &str {
        &self.method
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn path(&self) -> &str {
        &self.path
    }

    fn query(&self) -> &str {
        &self.query
    }

    fn header(&self, name: &str) -> Option<&[u8]> {
        RequestAttrs::header(self, name)
    }

    fn for_each_header_value<'a>(
        &'a self,
        name: &str,
        each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
    ) {
        for (n, v) in &self.headers {
            if n == name && each(v).is_break() {
                return;
            }
        }
    }

    fn jwt_claim(&self, name: &str) -> Option<&str> {
        RequestAttrs::jwt_claim(self, name)
    }

    fn viewer(&self, fact: ViewerFact) -> Option<&str> {
        match fact {
            ViewerFact::Country => self.country.as_deref(),
            ViewerFact::Asnum => self.asnum.as_deref(),
            ViewerFact::Ja4 => self.ja4.as_deref(),
            ViewerFact::Locale => self.locale.as_deref(),
        }
    }

    fn app_value(&self, name: &str) -> Option<&str> {
        RequestAttrs::app_value(self, name)
    }

    fn cost(&self) -> Option<u64> {
        self.cost
    }

    fn cookie(&self, name: &str) -> Option<&[u8]> {
        RequestAttrs::cookie(self, name)
    }
}

/// A reference reads as what it points to, so that a `&dyn RequestView`
/// goes wherever a request is taken by a trait of its own (such as
/// `ratelimit-nginx`'s key sources).
impl<T: RequestView + ?Sized> RequestView for &T {
    fn client_ip(&self) -> IpAddr {
        (**self).client_ip()
    }

    fn method(&self) -> &str {
        (**self).method()
    }

    fn host(&self) -> &str {
        (**self).host()
    }

    fn path(&self) -> &str {
        (**self).path()
    }

    fn query(&self) -> &str {
        (**self).query()
    }

    fn header(&self, name: &str) -> Option<&[u8]> {
        (**self).header(name)
    }

    fn for_each_header_value<'a>(
        &'a self,
        name: &str,
        each: &mut dyn FnMut(&'a [u8]) -> ControlFlow<()>,
    ) {
        (**self).for_each_header_value(name, each)
    }

    fn jwt_claim(&self, name: &str) -> Option<&str> {
        (**self).jwt_claim(name)
    }

    fn viewer(&self, fact: ViewerFact) -> Option<&str> {
        (**self).viewer(fact)
    }

    fn app_value(&self, name: &str) -> Option<&str> {
        (**self).app_value(name)
    }

    fn cost(&self) -> Option<u64> {
        (**self).cost()
    }

    fn query_arg(&self, name: &str) -> Option<Cow<'_, str>> {
        (**self).query_arg(name)
    }

    fn query_arg_bytes(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        (**self).query_arg_bytes(name)
    }

    fn cookie(&self, name: &str) -> Option<&[u8]> {
        (**self).cookie(name)
    }
}

#[cfg(test)]
mod tests;
