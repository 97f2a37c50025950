//! The local backstop: a per-IP token bucket in memory, checked before
//! everything else. It absorbs floods without touching the backend and works
//! when the backend is down. Its table is bounded: when full (and nothing in
//! it is idle), a new IP passes untracked rather than share a bucket, and
//! that is counted in `ratelimit_backstop_untracked_total`.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::algorithm::{token_bucket, CheckQuota, Decision};
use crate::cidr::ip_bytes;
use crate::store::{Sharded, WhenFull};
use crate::HashKey;

/// Settings of the backstop (set with `LimiterBuilder::backstop` and
/// `backstop_capacity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BackstopConfig {
    /// Requests per second each IP may average.
    pub(crate) per_second: u64,
    /// Requests an IP may send at once.
    pub(crate) burst: u64,
    /// IPs tracked at most.
    pub(crate) capacity: usize,
}

impl BackstopConfig {
    /// `per_second` with `burst`, tracking up to 100,000 IPs.
    pub(crate) const fn new(per_second: u64, burst: u64) -> Self {
        Self {
            per_second,
            burst,
            capacity: 100_000,
        }
    }

    /// Tracks at most `capacity` IPs.
    #[must_use]
    pub(crate) const fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }
}

/// The per-IP backstop.
#[derive(Debug)]
pub(crate) struct Backstop {
    quota: CheckQuota,
    table: Sharded<token_bucket::State>,
    untracked: AtomicU64,
}

impl Backstop {
    /// A backstop with these settings.
    pub(crate) fn new(config: BackstopConfig) -> Self {
        Self {
            quota: CheckQuota::per_second(config.per_second.max(1))
                .allow_burst(config.burst.max(1)),
            table: Sharded::new(config.capacity, 16),
            untracked: AtomicU64::new(0),
        }
    }

    /// Checks one request from `ip`; `None` when `ip` passes untracked.
    pub(crate) fn check(&self, ip: IpAddr, now: u64) -> Option<Decision> {
        let (b, n) = ip_bytes(ip);
        let key = HashKey::DEFAULT.digest(&b[..n]);
        let mut shard = self.table.shard(&key);
        let Some(mut e) = shard.entry(key, now, WhenFull::Refuse, Default::default) else {
            drop(shard);
            self.untracked.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("ratelimit_backstop_untracked_total").increment(1);
            return None;
        };
        let d = token_bucket::check(e.value, now, &self.quota);
        let idle = token_bucket::expires_at(e.value, &self.quota);
        e.set_idle_at(idle);
        Some(d)
    }

    /// IPs that passed untracked because the table was full.
    #[cfg(test)]
    pub(crate) fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_per_ip_then_untracked_when_full() {
        let b = Backstop {
            table: Sharded::new(1, 1),
            ..Backstop::new(BackstopConfig::new(1, 2))
        };
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(b.check(ip, 0).unwrap().allowed);
        assert!(b.check(ip, 0).unwrap().allowed);
        assert!(!b.check(ip, 0).unwrap().allowed);
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(b.check(other, 0), None, "table full: passes untracked");
        assert_eq!(b.untracked(), 1);
        assert!(b.check(other, 2000).is_some(), "the first IP is idle again");
    }
}
