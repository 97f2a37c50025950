//! A validated rule.

use super::allow::AllowList;
use super::parts::{DistinctOf, KeyPart, StatusMatch};
use crate::algorithm::{Algorithm, CheckQuota};
use crate::{Expression, KeyDigest};

/// What a rule does to a request over its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Refuse it with 429.
    Block,
    /// Count it as `would_limit` and let it through (shadow mode).
    Log,
}

/// What a rule does when its key part is missing. A header, cookie, query
/// argument or claim that is empty or only whitespace is missing too: a
/// value a client can set to nothing must not open a fresh counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OnMissingKey {
    /// Key on the client IP, in a namespace of its own.
    #[default]
    FallbackIp,
    /// Do not apply the rule.
    Skip,
    /// Answer 400 `bad_request`, when the rule blocks. A `log` rule (or
    /// any rule while the kill switch is on) lets the request through and
    /// lists itself in the verdict's `would_limit`.
    Reject,
}

/// What a rule does when the shared backend cannot answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FailMode {
    /// The rule passes.
    #[default]
    Open,
    /// 503 with `Retry-After: 1`.
    Closed,
    /// Count locally at `limit / fleet size`.
    Local,
}

/// When a rule learns what a request costs.
///
/// `Request` (the default) counts the cost at request time (the rule's
/// `cost`, or the application's). `Response` counts what the response
/// reports it cost (tokens, rows, bytes), charged after the response with
/// [`Limiter::charge`](crate::Limiter::charge): at request time the rule
/// only asks whether the budget is spent, and admits the request while it
/// is not. See the guide's
/// [Charging after the response](crate::guide::rules#charging-after-the-response-charge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Charge {
    /// The cost is counted when the request is decided.
    #[default]
    Request,
    /// The cost is charged after the response, by what it reports.
    Response,
}

/// One validated rule. Build it from JSON with [`RuleSet`](super::RuleSet) or
/// in Rust with [`RuleBuilder`](super::RuleBuilder); write it back as JSON
/// with `serde` (or [`RuleSet::to_json`](super::RuleSet::to_json)).
///
/// Equality compares every field (expressions by their source text).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    /// The rule's id: letters, digits, `-`, `_`, `.`; 1 to 64 characters.
    pub id: String,
    /// Which requests the rule applies to.
    pub expression: Expression,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Requests (or different values) per period.
    pub limit: u64,
    /// The period, in milliseconds (whole seconds, 1 s to 24 h).
    pub period_ms: u64,
    /// The bucket size (token and leaky bucket only).
    pub burst: Option<u64>,
    /// What `distinct` counts different values of.
    pub distinct_of: Option<DistinctOf>,
    /// Count upstream answers with these statuses instead of requests.
    pub count_statuses: Vec<StatusMatch>,
    /// The parts of the key.
    pub key: Vec<KeyPart>,
    /// What to do when a key part is missing.
    pub on_missing_key: OnMissingKey,
    /// Block or log.
    pub action: Action,
    /// Once over the limit, stay blocked this long (ms).
    pub penalty_ms: Option<u64>,
    /// What to do when the backend cannot answer.
    pub fail_mode: FailMode,
    /// When the rule stops running (Unix ms).
    pub expires_at_ms: Option<u64>,
    /// Whether to send `RateLimit-Policy` / `RateLimit` headers.
    pub ratelimit_headers: bool,
    /// What one request costs (1 unless set).
    pub cost: u64,
    /// Whether the cost is counted at request time or charged after the
    /// response.
    pub charge: Charge,
    /// IPs and key values that bypass the rule.
    pub allow: Option<AllowList>,
    /// Canary: the share of subjects, in basis points (0 to 10,000), for
    /// which a blocking rule blocks; it only logs for the others.
    pub canary_bp: Option<u32>,
}

impl Rule {
    /// Whether this rule blocks for `subject` as far as its canary goes:
    /// true without a canary, else whether the subject is among the
    /// canary's share (a stable hash, the same on every instance). The
    /// admin's rollback guard uses it to tell which of a rule's clients
    /// the canary blocked.
    pub fn canary_includes(&self, subject: &KeyDigest) -> bool {
        self.canary_bp.is_none_or(|bp| in_canary(subject, bp))
    }

    /// Whether this is a site-wide rule: expression `true`, not a count rule.
    pub fn is_site_wide(&self) -> bool {
        self.expression.is_always_true() && !self.is_count_rule()
    }

    /// Whether the rule counts upstream answers instead of requests.
    pub fn is_count_rule(&self) -> bool {
        !self.count_statuses.is_empty()
    }

    /// Whether the rule is charged after the response (`charge: response`).
    pub fn charges_response(&self) -> bool {
        self.charge == Charge::Response
    }

    /// Whether the rule blocks (rather than logs).
    pub fn is_blocking(&self) -> bool {
        self.action == Action::Block
    }

    /// Whether the rule has expired at `now_ms`.
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.expires_at_ms.is_some_and(|e| now_ms >= e)
    }

    /// The algorithm's numbers for a request of cost `cost`.
    pub fn quota(&self, cost: u64) -> CheckQuota {
        CheckQuota::new(self.limit, self.period_ms)
            .allow_burst(self.burst.unwrap_or(self.limit))
            .with_cost(cost)
    }

    /// Whether a count rule counts `status`.
    pub fn counts_status(&self, status: u16) -> bool {
        self.count_statuses.iter().any(|s| s.matches(status))
    }

    /// Adds to `out` the (lower-case) names of the request headers this
    /// rule reads: its expression, key parts and allow list.
    pub fn headers_used(&self, out: &mut Vec<String>) {
        self.expression.headers_used(out);
        let parts = self
            .key
            .iter()
            .chain(self.allow.iter().flat_map(|a| a.parts()));
        for p in parts {
            match p {
                KeyPart::Header(n) => out.push(n.clone()),
                KeyPart::Cookie(_) => out.push("cookie".to_owned()),
                _ => {}
            }
        }
    }

    /// Whether this rule, published again, can keep its subjects' state:
    /// same algorithm, period and `distinct_of`.
    pub fn same_state_as(&self, other: &Rule) -> bool {
        self.id == other.id
            && self.algorithm == other.algorithm
            && self.period_ms == other.period_ms
            && self.distinct_of == other.distinct_of
            && self.key == other.key
    }
}

/// Whether `subject` is among the `bp` basis points of subjects a canary
/// rule blocks for: a stable hash, the same on every instance.
pub(crate) fn in_canary(subject: &KeyDigest, bp: u32) -> bool {
    let mut b = [0u8; 8];
    b.copy_from_slice(&subject.0[8..]);
    u64::from_le_bytes(b) % 10_000 < u64::from(bp)
}
