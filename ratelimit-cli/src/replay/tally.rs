//! What a replay counts: lines, bad lines, time order, outcomes, and per
//! rule the requests, refusals and the clients refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use ratelimit_core::limiter::RuleReport;

/// Bad lines shown with their reason.
pub(crate) const SHOWN_BAD: usize = 5;

/// One client refused by a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Client {
    /// Requests refused (or, for a log rule, that would have been).
    pub refused: u64,
    /// The log time of the first refusal.
    pub first_ms: u64,
}

/// One rule's counts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RuleTally {
    /// The rule's id.
    pub rule: Arc<str>,
    /// Requests it checked.
    pub requests: u64,
    /// Requests a log rule would have limited.
    pub would_limit: u64,
    /// Requests a blocking rule limited.
    pub limited: u64,
    /// The clients it refused, by address.
    pub clients: HashMap<IpAddr, Client>,
    /// Per minute of the log with a request for the rule, in time order:
    /// the minute's start (Unix ms) and its requests, would-limit and
    /// limited counts.
    pub per_minute: Vec<(u64, [u64; 3])>,
}

impl RuleTally {
    /// The `n` clients refused most (ties: earlier first refusal, then
    /// lower address): deterministic.
    pub fn top(&self, n: usize) -> Vec<(IpAddr, Client)> {
        let mut v: Vec<(IpAddr, Client)> = self.clients.iter().map(|(ip, c)| (*ip, *c)).collect();
        v.sort_by(|a, b| {
            (b.1.refused.cmp(&a.1.refused))
                .then(a.1.first_ms.cmp(&b.1.first_ms))
                .then(a.0.cmp(&b.0))
        });
        v.truncate(n);
        v
    }
}

/// Everything a replay counted.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Tally {
    /// Lines read (empty lines not counted).
    pub lines: u64,
    /// Lines that did not parse, skipped.
    pub bad: u64,
    /// The first few bad lines: line number, reason, the line (cut).
    pub first_bad: Vec<(u64, String, String)>,
    /// Lines earlier than one before them, replayed at the latest time.
    pub out_of_order: u64,
    /// The largest step back in time, in milliseconds.
    pub max_back_ms: u64,
    /// The first and last log times replayed.
    pub span_ms: Option<(u64, u64)>,
    /// Requests forwarded, limited (429), refused for a missing key (400),
    /// and unavailable (503).
    pub outcomes: [u64; 4],
    /// Per rule, in the order first seen.
    pub rules: Vec<RuleTally>,
}

impl Tally {
    /// Counts a line that did not parse.
    pub fn bad_line(&mut self, number: u64, why: &str, line: &str) {
        self.bad += 1;
        if self.first_bad.len() < SHOWN_BAD {
            let cut: String = line.chars().take(120).collect();
            self.first_bad.push((number, why.to_owned(), cut));
        }
    }

    /// The time to replay a line of time `t` at: `t`, or the latest time
    /// seen when `t` is earlier (the clock never goes back).
    pub fn time_for(&mut self, t: u64) -> u64 {
        match self.span_ms {
            None => {
                self.span_ms = Some((t, t));
                t
            }
            Some((first, last)) if t >= last => {
                self.span_ms = Some((first, t));
                t
            }
            Some((_, last)) => {
                self.out_of_order += 1;
                self.max_back_ms = self.max_back_ms.max(last - t);
                last
            }
        }
    }

    /// Counts one rule's report for a request from `ip` at `now`.
    pub fn report(&mut self, r: &RuleReport, ip: IpAddr, now: u64) {
        // The id is the same Arc on every request of the rule: compare
        // pointers first, text only when none matches.
        let same = |t: &RuleTally| Arc::ptr_eq(&t.rule, &r.rule);
        let found = (self.rules.iter().position(same))
            .or_else(|| self.rules.iter().position(|t| t.rule == r.rule));
        let i = match found {
            Some(i) => i,
            None => {
                self.rules.push(RuleTally {
                    rule: r.rule.clone(),
                    requests: 0,
                    would_limit: 0,
                    limited: 0,
                    clients: HashMap::new(),
                    per_minute: Vec::new(),
                });
                self.rules.len() - 1
            }
        };
        let t = &mut self.rules[i];
        t.requests += 1;
        let (would, limited) = (!r.allowed && r.would_limit, !r.allowed && !r.would_limit);
        let delta = [1, u64::from(would), u64::from(limited)];
        // `now` never goes back (see `time_for`): the last minute or a new one.
        let minute = now - now % 60_000;
        match t.per_minute.last_mut() {
            Some((m, counts)) if *m == minute => {
                for (c, d) in counts.iter_mut().zip(delta) {
                    *c += d;
                }
            }
            _ => t.per_minute.push((minute, delta)),
        }
        if r.allowed {
            return;
        }
        if r.would_limit {
            t.would_limit += 1;
        } else {
            t.limited += 1;
        }
        let c = t.clients.entry(ip).or_insert(Client {
            refused: 0,
            first_ms: now,
        });
        c.refused += 1;
    }
}
