//! One check's arguments, as the scripts read them (see the header of
//! `prelude.lua`): its key, its head (algorithm, mode, penalty and cost in
//! one argument), its algorithm's parameters, and the call's time.

use ratelimit_core::algorithm::{distinct, Algorithm, CheckQuota};
use ratelimit_core::backend::{BackendError, BackendErrorKind, Check, CheckMode};
use redis::Cmd;

use super::{index, key_of, INJECTED_EXPIRY_OFFSET_MS, LUA_EXACT, LUA_FACTOR};

/// How the scripts read the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeSource {
    /// Valkey `TIME`.
    Valkey,
    /// `Batch::now_ms`.
    Injected,
}

/// One check, ready to be sent (see [`crate::call`]).
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    /// The subject's key.
    pub(crate) key: String,
    /// The injected time in Unix ms, `None` for Valkey `TIME`: the same
    /// for every check of a batch (see [`push_time`]).
    pub(crate) now: Option<u64>,
    /// The check's head: its algorithm, mode and penalty.
    pub(crate) head: Head,
    /// The algorithm's parameters.
    pub(crate) args: Vec<Arg>,
}

impl Invocation {
    /// Index of the algorithm's script: its head's digit less 1.
    pub(crate) fn script(&self) -> usize {
        usize::from(self.head.algorithm) - 1
    }
}

/// A check's head, one argument (see the header of `prelude.lua`): the
/// algorithm's digit alone for a count of cost 1 without a penalty (the
/// common case, which the scripts compare as a string), else followed by
/// the mode's digit, the penalty in ms when there is one and `x` and the
/// cost when it is not 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    /// The algorithm's digit: its script index + 1.
    pub(crate) algorithm: u8,
    /// 0 count, 1 probe, 2 charge.
    pub(crate) mode: u8,
    /// The penalty in ms, 0 for none.
    pub(crate) penalty: u64,
    /// The cost of a fixed window, sliding window, token bucket or leaky
    /// bucket check (1 for distinct, which counts values).
    pub(crate) cost: u64,
}

impl Head {
    /// A count of cost 1 without a penalty: the digit alone.
    fn is_plain(self) -> bool {
        self.mode == 0 && self.penalty == 0 && self.cost == 1
    }

    /// Appends the head to `cmd`; the common one as its digit, a number
    /// (nothing allocated).
    pub(crate) fn push(self, cmd: &mut Cmd) {
        if self.is_plain() {
            cmd.arg(self.algorithm);
        } else {
            cmd.arg(self.encode());
        }
    }

    /// The head as the scripts read it, e.g. `2`, `21`, `2030000`, `20x5`.
    pub(crate) fn encode(self) -> String {
        let mut s = String::with_capacity(2);
        s.push(char::from(b'0' + self.algorithm));
        if !self.is_plain() {
            s.push(char::from(b'0' + self.mode));
            if self.penalty != 0 {
                s.push_str(&self.penalty.to_string());
            }
            if self.cost != 1 {
                s.push('x');
                s.push_str(&self.cost.to_string());
            }
        }
        s
    }
}

/// One argument.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    /// An unsigned number.
    U(u64),
    /// A signed number.
    I(i64),
    /// A number below 10^10 as exactly 10 digits, zeros in front: the
    /// token bucket's limit, which its stored value ends with (see
    /// `token_bucket.lua`), so that the script compares it as sent.
    Digits10(u64),
}

/// `v` (below 10^10) as 10 decimal digits, zeros in front.
fn digits10(mut v: u64) -> [u8; 10] {
    let mut out = [b'0'; 10];
    for d in out.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out
}

/// Appends the time of a call to `cmd`, after the checks' arguments:
/// nothing for Valkey `TIME` (the expiry offset 0), else the injected time
/// and the expiry offset (see [`INJECTED_EXPIRY_OFFSET_MS`]).
pub(crate) fn push_time(cmd: &mut Cmd, now: Option<u64>) {
    if let Some(now) = now {
        cmd.arg(now).arg(INJECTED_EXPIRY_OFFSET_MS);
    }
}

/// Appends one check's head and parameters to `cmd`.
pub(crate) fn push_check(cmd: &mut Cmd, inv: &Invocation) {
    inv.head.push(cmd);
    for a in &inv.args {
        match *a {
            Arg::U(v) => cmd.arg(v),
            Arg::I(v) => cmd.arg(v),
            Arg::Digits10(v) => cmd.arg(&digits10(v)[..]),
        };
    }
}

/// A mode the rule's algorithm does not support: `distinct` only counts.
fn unsupported(check: &Check) -> BackendError {
    BackendError::new(
        BackendErrorKind::Unsupported,
        format!(
            "rule {}: {} rules only count requests ({:?} check)",
            check.rule_id(),
            check.algorithm.as_str(),
            check.mode
        ),
    )
}

/// An algorithm this crate has no script for (a newer core's).
fn unknown(check: &Check) -> BackendError {
    BackendError::new(
        BackendErrorKind::Unsupported,
        format!(
            "rule {}: the Valkey backend has no script for algorithm {}",
            check.rule_id(),
            check.algorithm.as_str()
        ),
    )
}

fn too_large(what: &str) -> BackendError {
    BackendError::new(
        BackendErrorKind::Protocol,
        format!("{what} too large to compute exactly in a Lua script (2^53)"),
    )
}

/// What an algorithm's parameters need of a check: its quota and whether
/// it charges.
struct Params<'c> {
    q: &'c CheckQuota,
    charge: bool,
    /// The period, at least 1 ms.
    period: u64,
    /// The limit, at least 1.
    limit: u64,
}

/// Builds the invocation of one check.
///
/// # Errors
///
/// A `Protocol` error when a bucket's numbers would pass 2^53 in Lua
/// (only for a burst above about 10^8 with a long period); an
/// `Unsupported` error for a `distinct` check in a mode other than
/// [`CheckMode::Count`], or for an algorithm without a script.
pub(crate) fn invocation(
    prefix: &str,
    check: &Check,
    now_ms: u64,
    time: TimeSource,
) -> Result<Invocation, BackendError> {
    let algorithm = check.algorithm;
    let script = index(algorithm).ok_or_else(|| unknown(check))?;
    if !algorithm.answers(check.mode) {
        return Err(unsupported(check));
    }
    let (penalty, mode) = match check.mode {
        CheckMode::Count => (check.penalty_ms.unwrap_or(0), 0),
        CheckMode::Probe => (0, 1),
        _ => (check.penalty_ms.unwrap_or(0), 2),
    };
    let q = &check.quota;
    let p = Params {
        q,
        charge: mode == 2,
        period: q.period_ms.max(1),
        limit: q.limit.max(1),
    };
    // Each algorithm's parameters, as its Lua file reads them (and the
    // cost of those that take it from the head).
    let (args, cost) = match algorithm {
        Algorithm::FixedWindow => (fixed_window(&p), q.cost),
        Algorithm::SlidingWindow => (sliding_window(&p)?, q.cost),
        Algorithm::TokenBucket => (token_bucket(&p)?, q.cost),
        // The leaky bucket runs the token bucket's check (its level is
        // the tokens spent), with the same parameters.
        Algorithm::LeakyBucket => (token_bucket(&p)?, q.cost),
        Algorithm::Distinct => (distinct(&p, check.bit), 1),
        _ => return Err(unknown(check)),
    };
    Ok(Invocation {
        key: key_of(prefix, check),
        now: match time {
            TimeSource::Valkey => None,
            TimeSource::Injected => Some(now_ms),
        },
        head: Head {
            algorithm: script as u8 + 1,
            mode,
            penalty,
            cost,
        },
        args,
    })
}

/// `fixed_window.lua`: the limit and the period.
fn fixed_window(p: &Params) -> Vec<Arg> {
    vec![Arg::U(p.q.limit), Arg::U(p.period)]
}

/// `sliding_window.lua`: the limit and the period.
fn sliding_window(p: &Params) -> Result<Vec<Arg>, BackendError> {
    // The estimate splits by the period (period^2 < 2^53); the
    // Retry-After divides by counts, which stay below the limit
    // (a charge's below 2^31).
    let q = p.q;
    if u128::from(p.period) * u128::from(p.period) >= LUA_EXACT
        || q.limit >= LUA_FACTOR
        || (p.charge && q.limit >= LUA_FACTOR - 1)
    {
        return Err(too_large("sliding window limit or period"));
    }
    Ok(vec![Arg::U(q.limit), Arg::U(p.period)])
}

/// `token_bucket.lua` (the leaky bucket's too): the limit, the capacity
/// (burst * period) and the period.
fn token_bucket(p: &Params) -> Result<Vec<Arg>, BackendError> {
    // The script's need is cost * period, a charge's at most 2^51
    // units (see token_bucket.lua), which stays exact when this holds.
    let (q, period) = (p.q, p.period);
    let capacity = q.burst as u128 * period as u128;
    let fits = if p.charge {
        capacity + u128::from(period) < LUA_EXACT / 2
    } else {
        capacity + u128::from(q.cost) * u128::from(period) < LUA_EXACT
    };
    if !fits {
        return Err(too_large("token bucket burst * period"));
    }
    // Its stored value ends with the limit's 10 digits (rules allow 10^9).
    if p.limit >= 10_000_000_000 {
        let why = format!(
            "token bucket limit {} has more digits than its stored value keeps (10)",
            p.limit
        );
        return Err(BackendError::new(BackendErrorKind::Protocol, why));
    }
    Ok(vec![
        Arg::Digits10(p.limit),
        Arg::U(capacity as u64),
        Arg::U(q.period_ms),
    ])
}

/// `distinct.lua`: the period, the most bits of the limit, the value's
/// bit (-1 for none) and the limit.
fn distinct(p: &Params, bit: Option<u16>) -> Vec<Arg> {
    let bit = bit.map_or(-1, |b| i64::from(b % distinct::BITS as u16));
    vec![
        Arg::U(p.period),
        Arg::U(u64::from(distinct::max_bits(p.q.limit))),
        Arg::I(bit),
        Arg::U(p.q.limit),
    ]
}
