//! Peek and reset: read a subject's state for a rule without counting, and
//! forget it (lift a penalty for a customer blocked by mistake), on any
//! backend that offers them.

use std::fmt;

use super::operator::Operator;
use super::published::Entry;
use crate::algorithm::Decision;
use crate::backend::{state_key_with, BackendError, Check, CheckMode};
use crate::subject::{subject, KeyOutcome};
use crate::{KeyDigest, RequestAttrs, RequestView};

/// Why a peek or reset could not be done.
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence; `{:#?}` shows the variant.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdminError {
    /// No published rule has this id.
    UnknownRule(String),
    /// The request carries no key for the rule (`skip` or `reject`).
    NoSubject,
    /// The backend failed or does not offer the operation.
    Backend(BackendError),
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdminError::UnknownRule(id) => write!(f, "no rule {id:?}"),
            AdminError::NoSubject => f.write_str("the request has no key for this rule"),
            AdminError::Backend(e) => write!(f, "backend: {e}"),
        }
    }
}

/// The `Display` form; `{:#?}` the variant.
impl fmt::Debug for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            AdminError::UnknownRule(id) => f.debug_tuple("UnknownRule").field(id).finish(),
            AdminError::NoSubject => f.write_str("NoSubject"),
            AdminError::Backend(e) => f.debug_tuple("Backend").field(e).finish(),
        }
    }
}

impl std::error::Error for AdminError {}

impl Operator<'_> {
    fn with_entry<T>(&self, id: &str, f: impl FnOnce(&Entry) -> T) -> Result<T, AdminError> {
        let p = self.published();
        let e = p
            .site_wide
            .iter()
            .chain(&p.others)
            .chain(&p.counts)
            .find(|e| e.rule.id == id)
            .ok_or_else(|| AdminError::UnknownRule(id.to_owned()))?;
        Ok(f(e))
    }

    /// See [`Limiter::subject_of`](super::Limiter::subject_of).
    pub(crate) fn subject_of(
        &self,
        id: &str,
        req: &dyn RequestView,
    ) -> Result<KeyDigest, AdminError> {
        let jwt_off = self.switches().jwt_disabled();
        let key = self.hash_key();
        match self.with_entry(id, |e| subject(&e.rule, req, &key, jwt_off))? {
            KeyOutcome::Subject(s) => Ok(s),
            _ => Err(AdminError::NoSubject),
        }
    }

    fn check_of(&self, id: &str, subject: KeyDigest) -> Result<(Check, bool), AdminError> {
        self.with_entry(id, |e| {
            let check = Check {
                algorithm: e.rule.algorithm,
                rule: e.rule.clone(),
                namespace: e.namespace.clone(),
                namespace_digest: e.ns_digest,
                subject,
                state_key: state_key_with(&e.ns_digest, &subject),
                quota: e.rule.quota(e.rule.cost),
                penalty_ms: None,
                bit: None,
                mode: CheckMode::Count,
            };
            (check, e.rule.is_count_rule())
        })
    }

    /// See [`Limiter::peek_subject`](super::Limiter::peek_subject).
    pub(crate) async fn peek_subject(
        &self,
        id: &str,
        subject: KeyDigest,
    ) -> Result<Decision, AdminError> {
        let (check, count_rule) = self.check_of(id, subject)?;
        (self.peek_check(&check, count_rule).await).map_err(AdminError::Backend)
    }

    /// Reads the state of `check`'s subject without counting: a running
    /// penalty, else the count store (`count_rule`) or the backend. The
    /// keyed API's [`KeyedLimit::peek`](crate::keyed::KeyedLimit::peek) too.
    pub(crate) async fn peek_check(
        &self,
        check: &Check,
        count_rule: bool,
    ) -> Result<Decision, BackendError> {
        let now = self.now_ms();
        if let Some(d) = self.inner.caches.penalties.refusal(&check.state_key, now) {
            return Ok(d);
        }
        if count_rule {
            let d = (self.inner.counts).peek(
                &check.rule,
                &check.namespace,
                &check.subject,
                now,
                &check.quota,
            );
            return Ok(d.unwrap_or(Decision::allow(check.rule.limit, 0)));
        }
        self.inner.backend.peek(check, now).await
    }

    /// See [`Limiter::peek`](super::Limiter::peek).
    pub(crate) async fn peek(&self, id: &str, req: &RequestAttrs) -> Result<Decision, AdminError> {
        let s = self.subject_of(id, req)?;
        self.peek_subject(id, s).await
    }

    /// See [`Limiter::reset_subject`](super::Limiter::reset_subject).
    pub(crate) async fn reset_subject(
        &self,
        id: &str,
        subject: KeyDigest,
    ) -> Result<(), AdminError> {
        let (check, count_rule) = self.check_of(id, subject)?;
        (self.reset_check(&check, count_rule).await).map_err(AdminError::Backend)
    }

    /// Forgets `check`'s subject: its penalty and refusal here, its local
    /// count, and its state in the count store (`count_rule`) or the
    /// backend. The keyed API's
    /// [`KeyedLimit::reset`](crate::keyed::KeyedLimit::reset) too.
    pub(crate) async fn reset_check(
        &self,
        check: &Check,
        count_rule: bool,
    ) -> Result<(), BackendError> {
        let caches = &self.inner.caches;
        caches.penalties.lift(&check.state_key);
        caches.overlimit.lift(&check.state_key);
        caches.local.reset(&check.namespace, &check.subject);
        if count_rule {
            self.inner.counts.reset(&check.namespace, &check.subject);
            return Ok(());
        }
        self.inner.backend.reset(check).await
    }

    /// See [`Limiter::lift_cached`](super::Limiter::lift_cached).
    pub(crate) fn lift_cached(&self, id: &str, subject: KeyDigest) -> Result<(), AdminError> {
        let (check, _) = self.check_of(id, subject)?;
        self.inner.caches.penalties.lift(&check.state_key);
        self.inner.caches.overlimit.lift(&check.state_key);
        Ok(())
    }

    /// See [`Limiter::reset`](super::Limiter::reset).
    pub(crate) async fn reset(&self, id: &str, req: &RequestAttrs) -> Result<(), AdminError> {
        let s = self.subject_of(id, req)?;
        self.reset_subject(id, s).await
    }
}
