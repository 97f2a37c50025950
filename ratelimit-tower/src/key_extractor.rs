//! [`KeyExtractor`]: key parts the layer derives from each request, for
//! rules keyed on `app:<name>`.

use std::fmt;
use std::sync::Arc;

use http::request::Parts;
use http::Request;
#[cfg(test)]
use ratelimit_core::RequestAttrs;

/// Derives one key part from a request's head (method, URI, headers,
/// extensions such as axum's `MatchedPath` or your auth layer's user).
///
/// Implemented for every `Fn(&Parts) -> Option<String>` closure; annotate
/// the argument (`|req: &Parts| ...`) so that it accepts any lifetime. The
/// head rather than the whole `Request<B>`, so that one extractor serves
/// any body type.
///
/// Register one with [`RateLimitLayer::key_part`]: for each request the
/// layer calls it with the request's head and, when it returns a value,
/// gives that value to the rules as `app:<name>`. The value is hashed like
/// any key part (the raw value is never stored or logged). `None` means the
/// part is missing and each rule's `on_missing_key` applies (`fallback_ip`,
/// `skip` or `reject`).
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
/// use http::request::Parts;
/// use ratelimit_tower::RateLimitLayer;
///
/// // The tenant is the part of the API key before the first '.'.
/// let layer = RateLimitLayer::from_json_str(r#"[
///   {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
///    "limit": 100, "period": "1m", "key": ["ip"]},
///   {"id": "per-tenant", "expression": "true", "algorithm": "sliding_window",
///    "limit": 1000, "period": "1m", "key": ["app:tenant"], "on_missing_key": "reject"}
/// ]"#)?
/// .key_part("tenant", |req: &Parts| {
///     let key = req.headers.get("x-api-key")?.to_str().ok()?;
///     Some(key.split('.').next()?.to_owned())
/// });
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
///
/// [`RateLimitLayer::key_part`]: crate::RateLimitLayer::key_part
/// [`AppValues`]: crate::AppValues
pub trait KeyExtractor: Send + Sync + 'static {
    /// The part's value for this request, or `None` when it has none.
    fn extract(&self, req: &Parts) -> Option<String>;
}

impl<F> KeyExtractor for F
where
    F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
{
    fn extract(&self, req: &Parts) -> Option<String> {
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
    /// request's head lent out of `req` and given back, so that the request
    /// itself is not moved (a move copies its 200-odd bytes).
    pub(crate) fn derive<B>(&self, req: &mut Request<B>) -> Vec<(String, String)> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let (mut head, ()) = Request::new(()).into_parts();
        swap_head(&mut head, req);
        let derived = self
            .0
            .iter()
            .filter_map(|(name, e)| Some((name.clone(), e.extract(&head)?)));
        let values = derived.collect();
        swap_head(&mut head, req);
        values
    }

    /// Puts the derived values in front of `attrs.app_values`.
    #[cfg(test)]
    pub(crate) fn apply<B>(&self, mut req: Request<B>, attrs: &mut RequestAttrs) -> Request<B> {
        let mut values = self.derive(&mut req);
        values.append(&mut attrs.app_values);
        attrs.app_values = values;
        req
    }
}

/// Swaps every field of a request head (`Parts` has no other public one).
fn swap_head<B>(head: &mut Parts, req: &mut Request<B>) {
    std::mem::swap(&mut head.method, req.method_mut());
    std::mem::swap(&mut head.uri, req.uri_mut());
    std::mem::swap(&mut head.version, req.version_mut());
    std::mem::swap(&mut head.headers, req.headers_mut());
    std::mem::swap(&mut head.extensions, req.extensions_mut());
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

    fn tenant(req: &Parts) -> Option<String> {
        let key = req.headers.get("x-api-key")?.to_str().ok()?;
        Some(key.split('.').next()?.to_owned())
    }

    #[test]
    fn derived_values_come_before_app_values_and_none_leaves_them() {
        let mut keys = KeyParts::default();
        keys.insert("tenant".into(), Arc::new(tenant));
        let mut attrs = RequestAttrs::new([192, 0, 2, 1].into()).with_app_value("tenant", "ext");
        let req = Request::builder()
            .header("x-api-key", "acme.secret")
            .body(())
            .unwrap();
        let req = keys.apply(req, &mut attrs);
        assert_eq!(attrs.app_value("tenant"), Some("acme"));
        assert_eq!(
            req.headers()["x-api-key"],
            "acme.secret",
            "the request is intact"
        );

        let mut attrs = RequestAttrs::new([192, 0, 2, 1].into()).with_app_value("tenant", "ext");
        keys.apply(Request::new(()), &mut attrs);
        assert_eq!(attrs.app_value("tenant"), Some("ext"));
    }

    #[test]
    fn extractors_see_the_whole_head_and_the_request_gets_it_back() {
        let mut keys = KeyParts::default();
        let seen = |p: &Parts| {
            let user = p.extensions.get::<&str>()?;
            Some(format!("{} {} {:?} {user}", p.method, p.uri, p.version))
        };
        keys.insert("seen".into(), Arc::new(seen));
        let mut req = Request::builder()
            .method("POST")
            .uri("/login?next=%2F")
            .version(http::Version::HTTP_2)
            .header("x-api-key", "acme.secret")
            .extension("ann")
            .body(7u8)
            .unwrap();
        let values = keys.derive(&mut req);
        let value = "POST /login?next=%2F HTTP/2.0 ann";
        assert_eq!(values, [("seen".to_owned(), value.to_owned())]);
        assert_eq!(req.method(), "POST");
        assert_eq!(req.uri(), "/login?next=%2F");
        assert_eq!(req.version(), http::Version::HTTP_2);
        assert_eq!(req.headers()["x-api-key"], "acme.secret");
        assert_eq!(req.extensions().get::<&str>(), Some(&"ann"));
        assert_eq!(*req.body(), 7);
    }

    #[test]
    fn a_name_registered_twice_keeps_the_last_extractor() {
        let mut keys = KeyParts::default();
        keys.insert("t".into(), Arc::new(|_: &Parts| Some("first".to_owned())));
        keys.insert("t".into(), Arc::new(|_: &Parts| Some("second".to_owned())));
        let mut attrs = RequestAttrs::new([192, 0, 2, 1].into());
        keys.apply(Request::new(()), &mut attrs);
        assert_eq!(attrs.app_values, [("t".to_owned(), "second".to_owned())]);
    }
}
