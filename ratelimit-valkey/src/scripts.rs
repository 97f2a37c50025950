//! The Lua scripts, one per algorithm, embedded with `include_str!` and
//! built once into static [`Script`]s, and the arguments of one check.
//!
//! Each script is the shared `prelude.lua` (the arguments, what every
//! check shares), its arguments' check, `time.lua` (the time, once per
//! call) and its checks: each `begin.lua` (mode, penalty, cost, key
//! expiry), the algorithm's common path (`<algorithm>.lua`), the shared
//! helpers (`helpers.lua`: exact integers, expiry, penalty marker) and the
//! rest of the check (`<algorithm>_rest.lua`). The scripts
//! decide admission and update the state atomically; they return the
//! decision itself (Retry-After, remaining, reset, penalty end), computed
//! exactly as the core computes it, which [`crate::reply`] decodes.

use std::sync::LazyLock;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use ratelimit_core::algorithm::{distinct, Algorithm, Quota};
use ratelimit_core::backend::{BackendError, BackendErrorKind, Check, CheckMode};
use redis::{Cmd, Script};

/// Values below this are exact in a Lua number (a double).
pub(crate) const LUA_EXACT: u128 = 1 << 53;

/// The scripts' exact `muldiv` takes factors and divisors below this.
pub(crate) const LUA_FACTOR: u64 = 1 << 31;

/// Added to every expiry when time is injected, so that an injected time in
/// the past (tests replay 2026-01-01) still gives live keys; the scripts
/// decide staleness themselves. About 139 years.
pub(crate) const INJECTED_EXPIRY_OFFSET_MS: u64 = 1 << 42;

/// One check: `begin.lua` (on key `k`, its head at ARGV[o], `ALG` its
/// algorithm's digit), the algorithm's common path, the shared helpers
/// and the rest of the algorithm's check (see the header of `prelude.lua`:
/// the helpers are made only by a check that gets past its common path).
macro_rules! check {
    ($digit:literal, $name:literal) => {
        concat!(
            "local ALG = '",
            $digit,
            "'\n",
            include_str!("scripts/begin.lua"),
            include_str!(concat!("scripts/", $name, ".lua")),
            include_str!("scripts/helpers.lua"),
            include_str!(concat!("scripts/", $name, "_rest.lua")),
        )
    };
}

/// One check's script: the prelude, the time (`time.lua`) and the check at
/// the top level, on KEYS[1], its head at ARGV[1] and its `$params`
/// parameters after it, then the time if injected (at `tail`).
macro_rules! single_source {
    ($digit:literal, $name:literal, $params:literal) => {
        concat!(
            include_str!("scripts/prelude.lua"),
            "\nlocal k, o = KEYS[1], 1\nlocal tail = o + 1 + ",
            $params,
            "\nlocal n = #ARGV\nif #KEYS ~= 1 or (n ~= tail - 1 and n ~= tail + 1) then\n",
            "  error('expected 1 key, a head and ",
            $params,
            " parameters, then the time if injected')\nend\n",
            include_str!("scripts/time.lua"),
            check!($digit, $name),
        )
    };
}

/// An algorithm in the batch script: its function of one check (its key
/// `k`, its head at ARGV[o]), the check as one check's script runs it;
/// made only when the batch uses it.
macro_rules! batch_part {
    ($digit:literal, $name:literal) => {
        concat!(
            "if uses",
            $digit,
            " then\n",
            $name,
            " = function(k, o)\n",
            check!($digit, $name),
            "end\nend\n"
        )
    };
}

/// The batch script's index in [`SOURCES`].
pub(crate) const BATCH: usize = 5;

/// The source of each algorithm's script, by [`index`], then the batch
/// script's (prelude included).
pub(crate) const SOURCES: [&str; 6] = [
    single_source!("1", "fixed_window", "2"),
    single_source!("2", "sliding_window", "2"),
    single_source!("3", "token_bucket", "3"),
    single_source!("4", "leaky_bucket", "6"),
    single_source!("5", "distinct", "4"),
    concat!(
        include_str!("scripts/prelude.lua"),
        "\n",
        include_str!("scripts/batch_head.lua"),
        include_str!("scripts/time.lua"),
        batch_part!("1", "fixed_window"),
        batch_part!("2", "sliding_window"),
        batch_part!("3", "token_bucket"),
        batch_part!("4", "leaky_bucket"),
        batch_part!("5", "distinct"),
        include_str!("scripts/batch.lua")
    ),
];

static SCRIPTS: LazyLock<[Script; 6]> = LazyLock::new(|| SOURCES.map(Script::new));

/// The Lua source of `algorithm`'s script (prelude included), as sent to
/// Valkey for a call of one check: for inspection, tooling and benchmarks.
///
/// `EVALSHA sha 1 key head params... [now offset]`: `now offset`, the time
/// in Unix ms and an expiry offset in ms, only with injected time (without
/// them the script reads Valkey `TIME`); `head` is the algorithm's digit (1 fixed window, 2 sliding
/// window, 3 token bucket, 4 leaky bucket, 5 distinct) for a count of
/// cost 1 without a penalty, else followed by the mode's digit (0 count, 1
/// probe, 2 charge), the penalty in ms if any and `x` and the cost if not 1
/// (the cost of fixed window, sliding window and token bucket checks, the
/// others' is in their parameters): `2` counts, `21` probes, `2030000`
/// counts with a 30 s penalty, `20x5` counts 5 (see the header of each
/// script for the parameters).
///
/// ```
/// use ratelimit_core::algorithm::Algorithm;
/// let lua = ratelimit_valkey::script_source(Algorithm::SlidingWindow);
/// assert!(lua.contains("local ALG = '2'"));
/// ```
pub fn script_source(algorithm: Algorithm) -> &'static str {
    SOURCES[index(algorithm)]
}

/// The Lua source of the batch script, as sent to Valkey for a call of
/// several checks of one request on one node (one hash slot in a cluster):
/// for inspection, tooling and benchmarks.
///
/// `EVALSHA sha N key1..keyN (head params...) x N [now offset]`, each
/// check's head and parameters and the time as for [`script_source`]. The reply is one string
/// of N lines, each a check's decision (as [`crate::decode_reply`] reads
/// one) or its error as `-CODE message`; a check's error leaves the others
/// decided.
pub fn batch_script_source() -> &'static str {
    SOURCES[BATCH]
}

/// Index of an algorithm's script.
pub(crate) fn index(algorithm: Algorithm) -> usize {
    match algorithm {
        Algorithm::FixedWindow => 0,
        Algorithm::SlidingWindow => 1,
        Algorithm::TokenBucket => 2,
        Algorithm::LeakyBucket => 3,
        _ => 4,
    }
}

/// The script of script index `i` (an algorithm's, or [`BATCH`]).
pub(crate) fn script(i: usize) -> &'static Script {
    &SCRIPTS[i.min(BATCH)]
}

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
    /// Index of the algorithm's script.
    pub(crate) script: usize,
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
    /// The cost of a fixed window, sliding window or token bucket check
    /// (1 for the others: their cost is in their parameters).
    pub(crate) cost: u64,
}

impl Head {
    /// The head as the scripts read it, e.g. `2`, `21`, `2030000`, `20x5`.
    pub(crate) fn encode(self) -> String {
        let mut s = String::with_capacity(2);
        s.push(char::from(b'0' + self.algorithm));
        if self.mode != 0 || self.penalty != 0 || self.cost != 1 {
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
    cmd.arg(inv.head.encode());
    for a in &inv.args {
        match *a {
            Arg::U(v) => cmd.arg(v),
            Arg::I(v) => cmd.arg(v),
        };
    }
}

/// The Valkey key of a check: `<prefix>{<subject>}<namespace>`, compact.
///
/// - `<subject>`: the first 12 bytes (96 bits) of the subject's digest in
///   base64url (16 characters): the hash tag, so one subject lives in one
///   slot whatever the rule.
/// - `<namespace>`: the first 4 bytes of a digest of the rule's namespace
///   (its id, algorithm, period and `distinct_of`) in base64url (6
///   characters): changing any of them starts fresh.
///
/// With the default prefix `rl:` a key is 27 bytes, which keeps a counter
/// under 64 bytes of `MEMORY USAGE`. [`crate::ValkeyBackend::key_of`] names
/// the key of a check, for debugging.
pub fn key_of(prefix: &str, check: &Check) -> String {
    let ns = &check.namespace_digest;
    let mut k = String::with_capacity(prefix.len() + 24);
    k.push_str(prefix);
    k.push('{');
    base64url(&check.subject.0[..12], &mut k);
    k.push('}');
    base64url(&ns.0[..4], &mut k);
    k
}

/// base64url without padding (RFC 4648 §5), appended to `out`.
fn base64url(bytes: &[u8], out: &mut String) {
    URL_SAFE_NO_PAD.encode_string(bytes, out);
}

#[cfg(test)]
mod key_tests;

/// The most a charge leaves in a bucket, in units (as the core).
const MAX_CHARGED_UNITS: u128 = 1 << 51;

/// A mode the rule's algorithm does not support: `distinct` only counts.
fn unsupported(check: &Check) -> BackendError {
    BackendError::new(
        BackendErrorKind::Unsupported,
        format!(
            "rule {}: {} rules only count requests ({:?} check)",
            check.rule.id,
            check.rule.algorithm.as_str(),
            check.mode
        ),
    )
}

fn too_large(what: &str) -> BackendError {
    BackendError::new(
        BackendErrorKind::Protocol,
        format!("{what} too large to compute exactly in a Lua script (2^53)"),
    )
}

/// Builds the invocation of one check.
///
/// # Errors
///
/// A `Protocol` error when a bucket's numbers would pass 2^53 in Lua
/// (only for a burst above about 10^8 with a long period); an
/// `Unsupported` error for a `distinct` check in a mode other than
/// [`CheckMode::Count`].
pub(crate) fn invocation(
    prefix: &str,
    check: &Check,
    now_ms: u64,
    time: TimeSource,
) -> Result<Invocation, BackendError> {
    let q: &Quota = &check.quota;
    let algorithm = check.rule.algorithm;
    let now = match time {
        TimeSource::Valkey => None,
        TimeSource::Injected => Some(now_ms),
    };
    let mut args = Vec::with_capacity(6);
    let (penalty, mode) = match check.mode {
        CheckMode::Count => (check.penalty_ms.unwrap_or(0), 0),
        _ if algorithm == Algorithm::Distinct => return Err(unsupported(check)),
        CheckMode::Probe => (0, 1),
        _ => (check.penalty_ms.unwrap_or(0), 2),
    };
    let charge = mode == 2;
    let period = q.period_ms.max(1);
    let limit = q.limit.max(1);
    // A charge's cost * period, in bucket units: at most what a bucket
    // holds after a charge (as the core), so the scripts stay exact.
    let charged_units = |p: u128| (q.cost as u128 * p).min(MAX_CHARGED_UNITS);
    match algorithm {
        Algorithm::FixedWindow => {
            args.extend([Arg::U(q.limit), Arg::U(period)]);
        }
        Algorithm::SlidingWindow => {
            // The estimate splits by the period (period^2 < 2^53); the
            // Retry-After divides by counts, which stay below the limit
            // (a charge's below 2^31).
            if u128::from(period) * u128::from(period) >= LUA_EXACT
                || q.limit >= LUA_FACTOR
                || (charge && q.limit >= LUA_FACTOR - 1)
            {
                return Err(too_large("sliding window limit or period"));
            }
            args.extend([Arg::U(q.limit), Arg::U(period)]);
        }
        Algorithm::TokenBucket => {
            // The script's need is cost * period, a charge's at most 2^51
            // units (see token_bucket.lua), which stays exact when this holds.
            let capacity = q.burst as u128 * period as u128;
            let fits = if charge {
                capacity + u128::from(period) < LUA_EXACT / 2
            } else {
                capacity + u128::from(q.cost) * u128::from(period) < LUA_EXACT
            };
            if !fits {
                return Err(too_large("token bucket burst * period"));
            }
            args.extend([Arg::U(limit), Arg::U(capacity as u64), Arg::U(q.period_ms)]);
        }
        Algorithm::LeakyBucket => {
            let (l, p) = (limit as u128, period as u128);
            let cost = if charge {
                charged_units(p)
            } else {
                q.cost as u128 * p
            };
            let tol = q.burst as u128 * p;
            if (cost + tol) / l + now_ms as u128 >= LUA_EXACT / 2
                || limit >= LUA_FACTOR
                || period >= LUA_FACTOR
            {
                return Err(too_large("leaky bucket burst * period / limit"));
            }
            args.extend([
                Arg::U(limit),
                Arg::U((cost / l) as u64),
                Arg::U((cost % l) as u64),
                Arg::U((tol / l) as u64),
                Arg::U((tol % l) as u64),
                Arg::U(q.period_ms),
            ]);
        }
        _ => {
            let bit = check
                .bit
                .map_or(-1, |b| i64::from(b % distinct::BITS as u16));
            args.extend([
                Arg::U(period),
                Arg::U(u64::from(distinct::max_bits(q.limit))),
                Arg::I(bit),
                Arg::U(q.limit),
            ]);
        }
    }
    let script = index(algorithm);
    // The cost of the algorithms that take it from the head.
    let cost = match algorithm {
        Algorithm::FixedWindow | Algorithm::SlidingWindow | Algorithm::TokenBucket => q.cost,
        _ => 1,
    };
    Ok(Invocation {
        script,
        key: key_of(prefix, check),
        now,
        head: Head {
            algorithm: script as u8 + 1,
            mode,
            penalty,
            cost,
        },
        args,
    })
}

#[cfg(test)]
mod tests;
