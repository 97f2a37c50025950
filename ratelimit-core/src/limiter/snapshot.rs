//! [`Snapshot`]: the published rule set read once for one request.

use std::fmt;

use super::current::Pinned;
use super::future::VerdictFuture;
use super::Limiter;
use crate::RequestView;

/// The rule set published when it was taken, for one request: the headers
/// its rules read (to build the request's attributes), then the check
/// against those same rules. One read of the published set per request
/// instead of two ([`Limiter::headers_used`], then [`Limiter::check`]), and
/// no publish can slip in between.
///
/// # Examples
///
/// ```
/// use ratelimit_core::{Limiter, RequestAttrs};
/// use ratelimit_core::rules::RuleSet;
///
/// let rules = RuleSet::from_json(r#"[{"id": "per-user", "expression": "true",
///     "algorithm": "fixed_window", "limit": 10, "period": "1m",
///     "key": ["ip", "header:x-user"]}]"#).unwrap();
/// let limiter = Limiter::new(rules);
/// let snapshot = limiter.snapshot().reports(true);
/// assert_eq!(snapshot.headers_used(), ["x-user"]);
/// let req = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_header("x-user", "ann");
/// let verdict = snapshot.check(&req).into_ready().unwrap();
/// assert!(verdict.is_forward());
/// assert_eq!(verdict.reports.len(), 1);
/// ```
pub struct Snapshot<'l> {
    limiter: &'l Limiter,
    published: Pinned,
    reports: bool,
}

impl Limiter {
    /// The published rule set, read once for one request.
    #[inline]
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot {
            limiter: self,
            published: self.inner.current.pin(),
            reports: false,
        }
    }
}

impl Snapshot<'_> {
    /// The request headers these rules read (lower-case, sorted): see
    /// [`Limiter::headers_used`].
    #[inline]
    pub fn headers_used(&self) -> &[String] {
        &self.published.headers_used
    }

    /// Whether these rules read nothing of a request but its client
    /// address and its cost ([`RequestView::client_ip`],
    /// [`RequestView::cost`]): the set is compiled into a plan that runs
    /// one plain site-wide `["ip"]` rule (see the guide's
    /// [Several rules on one request](crate::guide::rules#several-rules-on-one-request)).
    /// A caller may then [`check`](Snapshot::check) a view that answers
    /// only those two, every other part absent, and get the same verdict.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let per_ip = RuleSet::from_json(r#"[{"id": "per-ip", "expression": "true",
    ///     "algorithm": "token_bucket", "limit": 10, "burst": 10, "period": "1s",
    ///     "key": ["ip"]}]"#).unwrap();
    /// assert!(Limiter::new(per_ip).snapshot().reads_address_only());
    /// let login = RuleSet::from_json(r#"[{"id": "login",
    ///     "expression": "http.request.uri.path eq \"/login\"",
    ///     "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]}]"#).unwrap();
    /// assert!(!Limiter::new(login).snapshot().reads_address_only());
    /// ```
    #[inline]
    pub fn reads_address_only(&self) -> bool {
        self.published.compiled.is_some()
    }

    /// Also fills [`Verdict::reports`](crate::Verdict::reports) for this
    /// check (see [`LimiterBuilder::reports`](super::LimiterBuilder::reports)).
    #[must_use]
    pub fn reports(mut self, on: bool) -> Self {
        self.reports = on;
        self
    }

    /// Decides one request against these rules: [`Limiter::check`].
    #[inline]
    pub fn check(&self, req: &dyn RequestView) -> VerdictFuture {
        self.limiter
            .pipeline()
            .decide(&self.published, req, self.reports)
    }
}

impl fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("rules", &self.published.set.rules().len())
            .field("reports", &self.reports)
            .finish_non_exhaustive()
    }
}
