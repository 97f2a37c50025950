//! An owned copy of any [`RequestView`]: the core's [`RequestAttrs`] with
//! what a rule set reads of one request, for tests that hold a borrowed
//! view (the tower layer's `HttpView`, nginx's request) against the owned
//! attributes: the same fields, expression results, keys and verdicts.
//!
//! The copy is read through the view's own methods, so that what differs
//! between the two is how each answers the derived reads (query arguments,
//! cookies, a header's first value) and the rules' results over them.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{RequestAttrs, RequestView};
//! use ratelimit_testkit::owned::{owned_attrs, Reads};
//!
//! let view = RequestAttrs::new("192.0.2.1".parse().unwrap())
//!     .with_path("/login")
//!     .with_header("x-tenant", "acme")
//!     .with_app_value("plan", "gold");
//! let reads = Reads { headers: &["x-tenant"], app_values: &["plan"], ..Reads::default() };
//! let owned = owned_attrs(&view, &reads);
//! assert_eq!(owned.path, "/login");
//! assert_eq!(owned.header("x-tenant"), Some(&b"acme"[..]));
//! assert_eq!(owned.app_value("plan"), Some("gold"));
//! ```

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use ratelimit_core::{RequestAttrs, RequestView, ViewerFact};

/// The names a copy reads beyond the fields every request has (client
/// address, method, host, path, query, viewer facts, cost): a view cannot
/// list its headers, claims or application values, only answer for a name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reads<'a> {
    /// Headers (lower-case), every value of each; `cookie` for the cookie
    /// lines.
    pub headers: &'a [&'a str],
    /// JWT claims: the copy has claims when any of these is present.
    pub claims: &'a [&'a str],
    /// Application values (`app:<name>`), the first of each name.
    pub app_values: &'a [&'a str],
}

/// The owned attributes of `view`, as far as `reads` names them.
pub fn owned_attrs<V: RequestView + ?Sized>(view: &V, reads: &Reads<'_>) -> RequestAttrs {
    let mut attrs = RequestAttrs::blank(view.client_ip());
    attrs.method = view.method().to_owned();
    attrs.host = view.host().to_owned();
    attrs.path = view.path().to_owned();
    attrs.query = view.query().to_owned();
    for name in reads.headers {
        view.for_each_header_value(name, &mut |value| {
            attrs.headers.push(((*name).to_owned(), value.to_vec()));
            ControlFlow::Continue(())
        });
    }
    let claims: BTreeMap<String, String> = (reads.claims.iter())
        .filter_map(|n| Some(((*n).to_owned(), view.jwt_claim(n)?.to_owned())))
        .collect();
    attrs.jwt_claims = (!claims.is_empty()).then_some(claims);
    attrs.app_values = (reads.app_values.iter())
        .filter_map(|n| Some(((*n).to_owned(), view.app_value(n)?.to_owned())))
        .collect();
    attrs.cost = view.cost();
    let fact = |f| view.viewer(f).map(str::to_owned);
    attrs.country = fact(ViewerFact::Country);
    attrs.asnum = fact(ViewerFact::Asnum);
    attrs.ja4 = fact(ViewerFact::Ja4);
    attrs.locale = fact(ViewerFact::Locale);
    attrs
}
