//! The Lua scripts, one per algorithm, embedded with `include_str!` and
//! built once into static [`Script`]s, and the arguments of one check
//! (`scripts/invocation.rs`).
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

use ratelimit_core::algorithm::Algorithm;
use ratelimit_core::backend::Check;
use redis::Script;

/// Values below this are exact in a Lua number (a double).
pub(crate) const LUA_EXACT: u128 = 1 << 53;

/// The scripts' exact `muldiv` takes factors and divisors below this.
pub(crate) const LUA_FACTOR: u64 = 1 << 31;

/// Added to every expiry when time is injected, so that an injected time in
/// the past (tests replay 2026-01-01) still gives live keys; the scripts
/// decide staleness themselves. About 139 years.
pub(crate) const INJECTED_EXPIRY_OFFSET_MS: u64 = 1 << 42;

/// One check: `begin.lua` (on key `k`, its head at `ARGV[o]`, `ALG` its
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
/// the top level, on `KEYS[1]`, its head at `ARGV[1]` and its `$params`
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
/// `k`, its head at `ARGV[o]`, the call's `now` and `offset` as arguments,
/// not upvalues), named `$name`, the check of `$file` (the algorithm's own
/// by default) as one check's script runs it; made only when the batch
/// uses it.
macro_rules! batch_part {
    ($digit:literal, $name:literal) => {
        batch_part!($digit, $name, $name)
    };
    ($digit:literal, $name:literal, $file:literal) => {
        concat!(
            "if uses",
            $digit,
            " then\n",
            $name,
            " = function(k, o, now, offset)\n",
            check!($digit, $file),
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
    // The leaky bucket's level is the token bucket's tokens spent (see
    // `ratelimit_core`'s leaky bucket): the same check, its own digit.
    single_source!("4", "token_bucket", "3"),
    single_source!("5", "distinct", "4"),
    concat!(
        include_str!("scripts/prelude.lua"),
        "\n",
        include_str!("scripts/batch_head.lua"),
        include_str!("scripts/time.lua"),
        batch_part!("1", "fixed_window"),
        batch_part!("2", "sliding_window"),
        batch_part!("3", "token_bucket"),
        batch_part!("4", "leaky_bucket", "token_bucket"),
        batch_part!("5", "distinct"),
        include_str!("scripts/batch.lua")
    ),
];

static SCRIPTS: LazyLock<[Script; 6]> = LazyLock::new(|| SOURCES.map(Script::new));

/// The Lua source of `algorithm`'s script (prelude included), as sent to
/// Valkey for a call of one check: for inspection, tooling and benchmarks.
///
/// `EVALSHA sha 1 key head params... [now offset]`: `now offset`, the
/// time in Unix ms and an expiry offset in ms, only with injected time
/// (without them the script reads Valkey `TIME`); `head` is the
/// algorithm's digit (1 fixed window, 2 sliding window, 3 token bucket, 4
/// leaky bucket, 5 distinct) for a count of cost 1 without a penalty, else
/// followed by the mode's digit (0 count, 1 probe, 2 charge), the penalty
/// in ms if any and `x` and the cost if not 1 (distinct's is always 1):
/// `2` counts, `21` probes, `2030000` counts with a 30 s
/// penalty, `20x5` counts 5 (see the header of each script for the
/// parameters). These arguments are private to this crate's version: a
/// script is called by its SHA, so versions that send different arguments
/// run different scripts side by side on one server, on keys, values and
/// expiries that stay the same.
///
/// ```
/// use ratelimit_core::algorithm::Algorithm;
/// let lua = ratelimit_valkey::script_source(Algorithm::SlidingWindow).expect("a script");
/// assert!(lua.contains("local ALG = '2'"));
/// ```
///
/// `None` for an algorithm this version has no script for.
pub fn script_source(algorithm: Algorithm) -> Option<&'static str> {
    index(algorithm).map(|i| SOURCES[i])
}

/// The Lua source of the batch script, as sent to Valkey for a call of
/// several checks of one request on one node (one hash slot in a cluster):
/// for inspection, tooling and benchmarks.
///
/// `EVALSHA sha N key1..keyN (head params...) x N [now offset]`, each
/// check's head and parameters and the time as for [`script_source`].
/// The reply is one string of N lines, each a check's decision (as
/// [`crate::decode_reply`] reads one) or its error as `-CODE message`; a
/// check's error leaves the others decided.
pub fn batch_script_source() -> &'static str {
    SOURCES[BATCH]
}

/// Index of an algorithm's script, `None` for an algorithm this crate
/// has no script for (the core's `Algorithm` is `#[non_exhaustive]`: a
/// newer one is refused, never sent to another algorithm's script).
pub(crate) fn index(algorithm: Algorithm) -> Option<usize> {
    match algorithm {
        Algorithm::FixedWindow => Some(0),
        Algorithm::SlidingWindow => Some(1),
        Algorithm::TokenBucket => Some(2),
        Algorithm::LeakyBucket => Some(3),
        Algorithm::Distinct => Some(4),
        _ => None,
    }
}

/// The script of script index `i` (an algorithm's, or [`BATCH`]).
pub(crate) fn script(i: usize) -> &'static Script {
    &SCRIPTS[i.min(BATCH)]
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

mod invocation;

pub(crate) use invocation::{invocation, push_check, push_time, Invocation, TimeSource};
#[cfg(test)]
pub(crate) use invocation::{Arg, Head};

#[cfg(test)]
mod tests;
