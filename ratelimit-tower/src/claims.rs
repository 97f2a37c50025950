//! Values the application vouches for: verified JWT claims and `app:` values.
//!
//! Claims count only after the token verified. The rate limiter never reads
//! a token itself: the application's auth layer, placed **before** (outside)
//! the rate limit layer, verifies it and inserts [`VerifiedClaims`] into the
//! request's extensions. Without that extension every `jwt_claim:<name>` key
//! part is missing, and the rule's `on_missing_key` applies (`fallback_ip`,
//! `skip` or `reject`). Headers a client sends never become claims.
//!
//! # Examples
//!
//! ```
//! use ratelimit_tower::VerifiedClaims;
//!
//! let mut req = http::Request::new(());
//! // In the auth layer, once the signature checked out:
//! req.extensions_mut()
//!     .insert(VerifiedClaims::new([("sub", "user-42"), ("plan", "free")]));
//! assert_eq!(
//!     req.extensions().get::<VerifiedClaims>().and_then(|c| c.get("sub")),
//!     Some("user-42")
//! );
//! ```

use std::collections::BTreeMap;

/// The claims of a token that the application verified, as a request
/// extension. Only its presence makes `jwt_claim:<name>` key parts exist.
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `VerifiedClaims(value)`; it has nothing to grow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifiedClaims(pub BTreeMap<String, String>);

impl VerifiedClaims {
    /// Claims from name / value pairs.
    pub fn new<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The value of claim `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

impl From<BTreeMap<String, String>> for VerifiedClaims {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self(map)
    }
}

/// Values the application puts on a request for `app:<name>` key parts (a
/// tenant id it resolved, a plan, ...), as a request extension.
///
/// # Examples
///
/// ```
/// use ratelimit_tower::AppValues;
///
/// let mut req = http::Request::new(());
/// req.extensions_mut().insert(AppValues::new([("tenant", "acme")]));
/// ```
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `AppValues(value)`; it has nothing to grow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppValues(pub Vec<(String, String)>);

impl AppValues {
    /// Values from name / value pairs; the first of a repeated name counts.
    pub fn new<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// A response extension: the ids of `log` rules that counted the request as
/// over their limit (shadow mode). Present only when there is at least one.
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `WouldLimit(value)`; it has nothing to grow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WouldLimit(pub Vec<String>);

/// A request extension: what the application charges this request under
/// every rule but `distinct` (an expensive endpoint costs 10). Without it,
/// each rule's `cost` applies (1 unless set).
///
/// ```
/// use ratelimit_tower::Cost;
///
/// let mut req = http::Request::new(());
/// req.extensions_mut().insert(Cost(10));
/// ```
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `Cost(value)`; it has nothing to grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost(pub u64);
