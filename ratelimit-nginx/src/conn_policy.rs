//! The `limit_conn` list of one level: counts a request while it is in progress.
//!
//! A request is counted in every zone whose key is not empty, in order; when
//! one zone refuses it, the counts it already took are given back, so a
//! refused request is not counted. The [`ConnPermit`] gives the counts back
//! exactly once, when it is dropped.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{Level, LimitConnStatus, NginxConfig, ZoneRegistry};
//! use ratelimit_core::RequestAttrs;
//!
//! let config = NginxConfig::parse("limit_conn_zone $client_ip zone=addr:1m;").unwrap();
//! let zones = ZoneRegistry::new().load(&config).unwrap();
//! let policy = zones.limit_conn(&Level::parse("limit_conn addr 1;").unwrap()).unwrap();
//! let req = RequestAttrs::new("192.0.2.1".parse().unwrap());
//! let first = policy.acquire(&req);
//! assert_eq!(first.status(), Some(LimitConnStatus::Passed));
//! assert_eq!(policy.acquire(&req).status(), Some(LimitConnStatus::Rejected));
//! drop(first);
//! assert_eq!(policy.acquire(&req).status(), Some(LimitConnStatus::Passed));
//! ```

use std::fmt;
use std::sync::Arc;

use super::conn_zone::{Acquire, LimitConnZone};
use super::directive::LimitConnDirective;
use super::key::KeySource;
use super::log;
use super::policy::{policy_accessors, Bound};
use super::status::{LimitConnStatus, LimitKind, LimitRejected};
use ratelimit_core::KeyDigest;

#[derive(Debug, Clone)]
struct ConnLimit {
    zone: Arc<LimitConnZone>,
    max: u32,
}

impl ConnLimit {
    fn new(directive: &LimitConnDirective, zone: Arc<LimitConnZone>) -> Self {
        let max = directive.max();
        Self { zone, max }
    }
}

/// The limit_conn settings of a level, bound to its zones.
#[derive(Debug, Clone)]
pub struct LimitConnPolicy {
    bound: Bound<ConnLimit>,
}

/// The counts a request holds; dropping it gives them back, once.
#[derive(Default)]
pub struct ConnPermit {
    held: Vec<(Arc<LimitConnZone>, KeyDigest)>,
}

impl ConnPermit {
    /// True when the request is counted nowhere.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Gives the counts back now (the same as dropping the permit).
    pub fn release(self) {}
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        for (zone, digest) in self.held.drain(..) {
            zone.release(&digest);
        }
    }
}

impl fmt::Debug for ConnPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zones: Vec<&str> = self.held.iter().map(|(z, _)| z.name()).collect();
        f.debug_struct("ConnPermit").field("zones", &zones).finish()
    }
}

/// What limit_conn decided for a request.
#[derive(Debug)]
pub struct ConnDecision {
    status: Option<LimitConnStatus>,
    permit: ConnPermit,
    rejected: Option<LimitRejected>,
}

impl ConnDecision {
    /// `$limit_conn_status`; `None` when no limit applied (no limit, or every key empty).
    pub fn status(&self) -> Option<LimitConnStatus> {
        self.status
    }

    /// The refusal, when the request is refused (never in a dry run).
    pub fn rejected(&self) -> Option<&LimitRejected> {
        self.rejected.as_ref()
    }

    /// The counts the request holds, to keep until its response is done.
    pub fn into_permit(self) -> ConnPermit {
        self.permit
    }
}

impl LimitConnPolicy {
    /// Counts a request whose header has just been read.
    pub fn acquire(&self, src: &dyn KeySource) -> ConnDecision {
        let mut permit = ConnPermit::default();
        let mut status = None;
        let mut key = Vec::new();
        for limit in self.bound.limits.iter() {
            let Some(digest) = limit.zone.states().digest_of(src, &mut key) else {
                continue;
            };
            status = Some(LimitConnStatus::Passed);
            match limit.zone.acquire(&digest, limit.max) {
                Acquire::Counted => permit.held.push((Arc::clone(&limit.zone), digest)),
                Acquire::Busy => {
                    log::conn_rejected(self.bound.log_level, limit.zone.name(), self.bound.dry_run);
                    return self.reject(permit, &limit.zone, false);
                }
                Acquire::Exhausted => {
                    log::zone_exhausted(
                        self.bound.log_level,
                        "limit_conn",
                        limit.zone.name(),
                        self.bound.dry_run,
                    );
                    return self.reject(permit, &limit.zone, true);
                }
            }
        }
        let status = status.map(LimitConnStatus::counted);
        ConnDecision {
            status,
            permit,
            rejected: None,
        }
    }

    fn reject(&self, taken: ConnPermit, zone: &LimitConnZone, exhausted: bool) -> ConnDecision {
        // A refused request is not counted, also in a dry run (as nginx's cleanup_all).
        drop(taken);
        let rejected = self.bound.refusal(LimitKind::Conn, zone.name(), exhausted);
        let status = rejected
            .as_ref()
            .map_or(LimitConnStatus::RejectedDryRun, |_| {
                LimitConnStatus::Rejected
            });
        ConnDecision {
            status: Some(status.counted()),
            permit: ConnPermit::default(),
            rejected,
        }
    }
}

policy_accessors!(LimitConnPolicy, LimitConnZone, ConnLimit, "limit_conn");
