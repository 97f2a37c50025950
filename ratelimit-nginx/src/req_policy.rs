//! The `limit_req` list of one level, applied to a request as nginx does.
//!
//! Every zone is looked up first, in order, pinning its state; only when
//! none refuses are they charged (the last one at once, the others after).
//! A request that any zone refuses is charged nowhere. The wait is the
//! longest of the zones'.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{Level, LimitReqStatus, NginxConfig, ZoneRegistry};
//! use ratelimit_core::RequestAttrs;
//!
//! let config = NginxConfig::parse("limit_req_zone $client_ip zone=one:1m rate=1r/s;").unwrap();
//! let zones = ZoneRegistry::new().load(&config).unwrap();
//! let policy = zones.limit_req(&Level::parse("limit_req zone=one burst=2 nodelay;").unwrap()).unwrap();
//! let req = RequestAttrs::new("192.0.2.1".parse().unwrap());
//! let now = 1_700_000_000_000;
//! let statuses: Vec<_> = (0..4).map(|_| policy.check(&req, now).status()).collect();
//! use LimitReqStatus::*;
//! assert_eq!(statuses, [Some(Passed), Some(Passed), Some(Passed), Some(Rejected)]);
//! ```

use std::sync::Arc;
use std::time::Duration;

use super::arith::delay_ms;
use super::directive::LimitReqDirective;
use super::key::KeySource;
use super::log;
use super::policy::{policy_accessors, Bound};
use super::req_zone::{LimitReqZone, Lookup};
use super::status::{LimitKind, LimitRejected, LimitReqStatus};
use ratelimit_core::KeyDigest;

#[derive(Debug, Clone)]
struct ReqLimit {
    zone: Arc<LimitReqZone>,
    /// In 1/1000 requests.
    burst: u64,
    /// The excess that passes without waiting, in 1/1000 requests.
    delay: u64,
}

impl ReqLimit {
    fn new(directive: &LimitReqDirective, zone: Arc<LimitReqZone>) -> Self {
        let (burst, delay) = (directive.burst_milli(), directive.delay_milli());
        Self { zone, burst, delay }
    }

    fn delay_ms(&self, excess: u64) -> u64 {
        delay_ms(excess, self.delay, self.zone.rate().milli_per_second())
    }
}

/// The limit_req settings of a level, bound to its zones.
#[derive(Debug, Clone)]
pub struct LimitReqPolicy {
    bound: Bound<ReqLimit>,
}

/// What limit_req decided for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReqDecision {
    status: Option<LimitReqStatus>,
    delay: Duration,
    rejected: Option<LimitRejected>,
}

impl ReqDecision {
    /// `$limit_req_status`; `None` when no limit applied (no limit, or every key empty).
    pub fn status(&self) -> Option<LimitReqStatus> {
        self.status
    }

    /// How long the request waits before it goes on; zero when it does not.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The refusal, when the request is refused (never in a dry run).
    pub fn rejected(&self) -> Option<&LimitRejected> {
        self.rejected.as_ref()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rc {
    Declined,
    Again,
    Done,
    Busy,
    Exhausted,
}

impl LimitReqPolicy {
    /// Applies every `limit_req` of the level to a request arriving at `now_ms`.
    pub fn check(&self, src: &dyn KeySource, now_ms: u64) -> ReqDecision {
        let count = self.bound.limits.len();
        let mut pinned: Vec<Option<KeyDigest>> = vec![None; count];
        let mut key = Vec::new();
        let (mut rc, mut excess, mut last_looked_up, mut n) = (Rc::Declined, 0, 0, 0);
        while n < count {
            let limit = &self.bound.limits[n];
            last_looked_up = n;
            if let Some(digest) = limit.zone.states().digest_of(src, &mut key) {
                match limit
                    .zone
                    .lookup(&digest, now_ms, limit.burst, n + 1 == count)
                {
                    Lookup::Pinned(e) => (pinned[n], excess, rc) = (Some(digest), e, Rc::Again),
                    Lookup::Committed(e) => (excess, rc) = (e, Rc::Done),
                    Lookup::Busy(e) => (excess, rc) = (e, Rc::Busy),
                    Lookup::Exhausted => (excess, rc) = (0, Rc::Exhausted),
                }
                if rc != Rc::Again {
                    break;
                }
            }
            n += 1;
        }
        match rc {
            Rc::Declined => ReqDecision {
                status: None,
                delay: Duration::ZERO,
                rejected: None,
            },
            Rc::Busy | Rc::Exhausted => {
                for (i, digest) in pinned.iter().enumerate().take(n) {
                    if let Some(digest) = digest {
                        self.bound.limits[i].zone.unpin(digest);
                    }
                }
                self.reject(&self.bound.limits[n].zone, excess, rc == Rc::Exhausted)
            }
            Rc::Again | Rc::Done => {
                let excess = if rc == Rc::Again { 0 } else { excess };
                self.account(&pinned[..n], last_looked_up, excess, now_ms)
            }
        }
    }

    /// nginx's `ngx_http_limit_req_account`: charges the pinned states and
    /// finds the longest wait.
    fn account(
        &self,
        pinned: &[Option<KeyDigest>],
        last: usize,
        excess: u64,
        now_ms: u64,
    ) -> ReqDecision {
        let mut worst = (self.bound.limits[last].delay_ms(excess), excess, last);
        for (i, digest) in pinned.iter().enumerate().rev() {
            let Some(digest) = digest else { continue };
            let limit = &self.bound.limits[i];
            let e = limit.zone.commit(digest, now_ms);
            let wait = limit.delay_ms(e);
            if wait > worst.0 {
                worst = (wait, e, i);
            }
        }
        let (wait, excess, i) = worst;
        if wait == 0 {
            return ReqDecision {
                status: Some(LimitReqStatus::Passed.counted()),
                delay: Duration::ZERO,
                rejected: None,
            };
        }
        log::req_delayed(
            self.bound.log_level,
            self.bound.limits[i].zone.name(),
            excess,
            self.bound.dry_run,
        );
        let (status, delay) = if self.bound.dry_run {
            (LimitReqStatus::DelayedDryRun, Duration::ZERO)
        } else {
            (LimitReqStatus::Delayed, Duration::from_millis(wait))
        };
        ReqDecision {
            status: Some(status.counted()),
            delay,
            rejected: None,
        }
    }

    fn reject(&self, zone: &LimitReqZone, excess: u64, exhausted: bool) -> ReqDecision {
        if exhausted {
            log::zone_exhausted(
                self.bound.log_level,
                "limit_req",
                zone.name(),
                self.bound.dry_run,
            );
        } else {
            log::req_rejected(
                self.bound.log_level,
                zone.name(),
                excess,
                self.bound.dry_run,
            );
        }
        let rejected = self.bound.refusal(LimitKind::Req, zone.name(), exhausted);
        let status = rejected
            .as_ref()
            .map_or(LimitReqStatus::RejectedDryRun, |_| LimitReqStatus::Rejected);
        ReqDecision {
            status: Some(status.counted()),
            delay: Duration::ZERO,
            rejected,
        }
    }
}

policy_accessors!(LimitReqPolicy, LimitReqZone, ReqLimit, "limit_req");
