//! [`KeyExtractor`]: key parts the layer derives from each request, for
//! rules keyed on `app:<name>`.

use std::fmt;
use std::sync::Arc;

use http::{Extensions, HeaderMap, Method, Request, Uri, Version};

/// A request's head, borrowed: what a [`KeyExtractor`] reads. The same
/// accessors as `http::Request`, for any body type, without moving or
/// copying the request.
///
/// # Examples
///
/// ```
/// use ratelimit_tower::RequestHead;
///
/// let req = http::Request::post("/login").header("x-user", "ann").body(()).unwrap();
/// let head = RequestHead::of(&req);
/// assert_eq!(head.method(), "POST");
/// assert_eq!(head.uri().path(), "/login");
/// assert_eq!(head.headers()["x-user"], "ann");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RequestHead<'r> {
    method: &'r Method,
    uri: &'r Uri,
    version: Version,
    headers: &'r HeaderMap,
    extensions: &'r Extensions,
}

impl<'r> RequestHead<'r> {
    /// The head of `req`.
    pub fn of<B>(req: &'r Request<B>) -> Self {
        Self {
            method: req.method(),
            uri: req.uri(),
            version: req.version(),
            headers: req.headers(),
            extensions: req.extensions(),
        }
    }

    /// The request method.
    pub fn method(&self) -> &'r Method {
        self.method
    }

    /// The request target.
    pub fn uri(&self) -> &'r Uri {
        self.uri
    }

    /// The HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The headers.
    pub fn headers(&self) -> &'r HeaderMap {
        self.headers
    }

    /// The extensions: axum's `MatchedPath`, what your auth layer inserted.
    pub fn extensions(&self) -> &'r Extensions {
        self.extensions
    }
}

/// Derives one key part from a request's head (method, URI, headers,
/// extensions such as axum's `MatchedPath` or your auth layer's user).
///
/// Implemented for every `Fn(&RequestHead<'_>) -> Option<String>` closure;
/// annotate the argument (`|req: &RequestHead<'_>| ...`) so that it accepts
/// any lifetime. The borrowed head rather than the whole `Request<B>`, so
/// that one extractor serves any body type.
///
/// Register one with [`RateLimitLayer::key_part`]: for each request the
/// layer calls it with the request's head and, when it returns a value,
/// gives that value to the rules as `app:<name>`. The value is hashed like
/// any key part (the raw value is never stored or logged). `None` means the
/// part is missing and each rule's `on_missing_key` applies (`fallback_ip`,
/// `skip` or `reject`). A request the layer refuses for its size (414, 431)
/// or for a missing peer address (500) never reaches the extractors.
///
/// A value the layer derives comes before an [`AppValues`] extension of the
/// same name; when the extractor returns `None`, an [`AppValues`] value of
/// that name still counts.
///
/// Like any value the client can choose (a header, an API key it made up),
/// an `app:` part needs a partner: `ip` or `jwt_claim` in the same key, or a
/// site-wide rule keyed on `ip` in the set. Loading refuses a rule set
/// without one.
///
/// # Examples
///
/// ```
/// use ratelimit_tower::{RateLimitLayer, RequestHead};
///
/// // The tenant is the part of the API key before the first '.'.
/// let layer = RateLimitLayer::from_json_str(r#"[
///   {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
///    "limit": 100, "period": "1m", "key": ["ip"]},
///   {"id": "per-tenant", "expression": "true", "algorithm": "sliding_window",
///    "limit": 1000, "period": "1m", "key": ["app:tenant"], "on_missing_key": "reject"}
/// ]"#)?
/// .key_part("tenant", |req: &RequestHead<'_>| {
///     let key = req.headers().get("x-api-key")?.to_str().ok()?;
///     Some(key.split('.').next()?.to_owned())
/// });
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
///
/// [`RateLimitLayer::key_part`]: crate::RateLimitLayer::key_part
/// [`AppValues`]: crate::AppValues
pub trait KeyExtractor: Send + Sync + 'static {
    /// The part's value for this request, or `None` when it has none.
    fn extract(&self, req: &RequestHead<'_>) -> Option<String>;
}

impl<F> KeyExtractor for F
where
    F: Fn(&RequestHead<'_>) -> Option<String> + Send + Sync + 'static,
{
    fn extract(&self, req: &RequestHead<'_>) -> Option<String> {
        self(req)
    }
}

/// The layer's named extractors.
#[derive(Clone, Default)]
pub(crate) struct KeyParts(Vec<(String, Arc<dyn KeyExtractor>)>);

impl KeyParts {
    /// Adds (or replaces) the extractor for `app:<name>`.
    pub(crate) fn insert(&mut self, name: String, extractor: Arc<dyn KeyExtractor>) {
        self.0.retain(|(n, _)| *n != name);
        self.0.push((name, extractor));
    }

    /// Whether no extractor is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The derived values, in registration order (they come before an
    /// `AppValues` extension of the same name). The extractors read the
    /// request's head in place.
    pub(crate) fn derive<B>(&self, req: &Request<B>) -> Vec<(String, String)> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let head = RequestHead::of(req);
        let derived = self
            .0
            .iter()
            .filter_map(|(name, e)| Some((name.clone(), e.extract(&head)?)));
        derived.collect()
    }
}

impl fmt::Debug for KeyParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(n, _)| format!("app:{n}")))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(req: &RequestHead<'_>) -> Option<String> {
        let key = req.headers().get("x-api-key")?.to_str().ok()?;
        Some(key.split('.').next()?.to_owned())
    }

    #[test]
    fn a_value_is_derived_from_the_headers_and_none_leaves_the_part_out() {
        let mut keys = KeyParts::default();
        keys.insert("tenant".into(), Arc::new(tenant));
        let req = Request::builder()
            .header("x-api-key", "acme.secret")
            .body(())
            .unwrap();
        let derived = keys.derive(&req);
        assert_eq!(derived, [("tenant".to_owned(), "acme".to_owned())]);
        assert_eq!(keys.derive(&Request::new(())), []);
    }

    #[test]
    fn extractors_see_the_whole_head() {
        let mut keys = KeyParts::default();
        let seen = |p: &RequestHead<'_>| {
            let user = p.extensions().get::<&str>()?;
            let key = p.headers().get("x-api-key")?.to_str().ok()?;
            let (method, uri, version) = (p.method(), p.uri(), p.version());
            Some(format!("{method} {uri} {version:?} {user} {key}"))
        };
        keys.insert("seen".into(), Arc::new(seen));
        let req = Request::builder()
            .method("POST")
            .uri("/login?next=%2F")
            .version(http::Version::HTTP_2)
            .header("x-api-key", "acme.secret")
            .extension("ann")
            .body(7u8)
            .unwrap();
        let value = "POST /login?next=%2F HTTP/2.0 ann acme.secret";
        assert_eq!(keys.derive(&req), [("seen".to_owned(), value.to_owned())]);
    }

    #[test]
    fn a_name_registered_twice_keeps_the_last_extractor() {
        let mut keys = KeyParts::default();
        let first = |_: &RequestHead<'_>| Some("first".to_owned());
        let second = |_: &RequestHead<'_>| Some("second".to_owned());
        keys.insert("t".into(), Arc::new(first));
        keys.insert("t".into(), Arc::new(second));
        let derived = keys.derive(&Request::new(()));
        assert_eq!(derived, [("t".to_owned(), "second".to_owned())]);
    }
}
