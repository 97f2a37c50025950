//! A request's [`Report`]: each settled rule written to the verdict in
//! place (outcome, `Retry-After`, `RateLimit` items, `would_limit`,
//! reports) and counted in its rule's statistics.

use super::{Report, Settled};
use crate::limiter::published::Entry;
use crate::limiter::select::Pending;
use crate::rules::FailMode;
use crate::stats::Event;
use crate::verdict::{HeaderItem, Outcome, RuleReport, Verdict};

/// The verdict of one request, settled in place.
pub(in crate::limiter) struct VerdictReport<'v> {
    verdict: &'v mut Verdict,
    /// A blocking rule failed closed: the verdict is 503 unless a rule
    /// limited.
    unavailable: bool,
    /// Fill [`Verdict::reports`].
    reports: bool,
}

impl<'v> VerdictReport<'v> {
    #[inline]
    pub(in crate::limiter) fn new(verdict: &'v mut Verdict, reports: bool) -> Self {
        Self {
            verdict,
            unavailable: false,
            reports,
        }
    }
}

impl<E: AsRef<Entry>> Report<E> for VerdictReport<'_> {
    // Inlined into each caller: the tests of what the caller knows (a
    // cached answer, a backend's) fold away.
    #[inline(always)]
    fn settled(&mut self, p: &Pending<E>, s: Settled<'_>) {
        let verdict = &mut *self.verdict;
        let entry = p.entry.as_ref();
        let blocks = p.blocks;
        let Some(d) = s.decision else {
            // Failed open or closed, or untracked locally.
            if s.failed && entry.rule.fail_mode == FailMode::Closed && blocks {
                self.unavailable = true;
                entry.stats.record(Event::FailClosed);
            } else if s.failed {
                entry.stats.record(Event::FailOpen);
            }
            return;
        };
        let would_limit = !d.allowed && !blocks;
        if !d.allowed && blocks {
            verdict.outcome = Outcome::Limited;
            verdict.retry_after_ms = verdict.retry_after_ms.max(d.retry_after_ms);
            entry.stats.record(Event::Limited);
            entry.stats.record_subject(p.subject);
        } else if would_limit {
            verdict.would_limit.push(entry.rule.id.clone());
            entry.stats.record(Event::WouldLimit);
            entry.stats.record_subject(p.subject);
        } else {
            entry.stats.record(Event::Allowed);
        }
        if blocks && entry.rule.ratelimit_headers {
            let item = HeaderItem::of(entry.id.clone(), &entry.rule, d.remaining, d.reset_ms);
            verdict.headers.push(item);
        }
        if self.reports {
            verdict.reports.push(RuleReport {
                rule: entry.id.clone(),
                subject: p.subject,
                allowed: d.allowed,
                remaining: d.remaining,
                would_limit,
                failed: s.failed,
                from_penalty_cache: s.cached,
            });
        }
    }

    #[inline]
    fn done(&mut self) {
        if self.verdict.outcome != Outcome::Limited && self.unavailable {
            self.verdict.outcome = Outcome::Unavailable;
            self.verdict.retry_after_ms = 1000;
        }
    }
}
