//! [`State::encode`] and [`State::decode`]: a subject's state as bytes, for
//! a store outside the process ([`RemoteStore`](crate::backend::RemoteStore))
//! that keeps it as an opaque value and hands it back.
//!
//! The format (version 1) is documented on [`State::encode`], where the
//! published docs show it.

use std::fmt;

use super::State;
use crate::algorithm::{Algorithm, SubjectState};

/// Why bytes are not a [`State`] (see [`State::decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDecodeError {
    detail: String,
}

impl fmt::Display for StateDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an encoded state: {}", self.detail)
    }
}

impl std::error::Error for StateDecodeError {}

fn error(detail: impl Into<String>) -> StateDecodeError {
    StateDecodeError {
        detail: detail.into(),
    }
}

const HEAD: usize = 10;

/// The largest number a state holds: no time (Unix ms, year 287,000) and
/// no count the algorithms write passes 2^53, and bounded numbers keep
/// their arithmetic from overflowing on bytes a store corrupted.
pub(crate) const MAX_NUMBER: u64 = 1 << 53;

const fn code(a: Algorithm) -> u8 {
    match a {
        Algorithm::FixedWindow => 0,
        Algorithm::SlidingWindow => 1,
        Algorithm::TokenBucket => 2,
        Algorithm::LeakyBucket => 3,
        Algorithm::Distinct => 4,
    }
}

fn algorithm(code: u8) -> Option<Algorithm> {
    Some(match code {
        0 => Algorithm::FixedWindow,
        1 => Algorithm::SlidingWindow,
        2 => Algorithm::TokenBucket,
        3 => Algorithm::LeakyBucket,
        4 => Algorithm::Distinct,
        _ => return None,
    })
}

impl State {
    /// The version of the byte format [`State::encode`] writes.
    pub const FORMAT_VERSION: u8 = 1;

    /// The state as bytes, for a store outside the process
    /// ([`RemoteStore`](crate::backend::RemoteStore)).
    ///
    /// # Format, version 1
    ///
    /// Little-endian throughout; `u64` is 8 bytes.
    ///
    /// | offset | size | field |
    /// | --- | --- | --- |
    /// | 0 | 1 | format version: `1` ([`State::FORMAT_VERSION`]) |
    /// | 1 | 1 | algorithm: `0` fixed window, `1` sliding window, `2` token bucket, `3` leaky bucket, `4` distinct |
    /// | 2 | 8 | `expires_at_ms`: when the state stops mattering (Unix ms) |
    /// | 10 | 8 | the end of a penalty (Unix ms), `0` for none |
    /// | 18 | 8 × n | the algorithm's numbers, in order |
    ///
    /// | algorithm | n | numbers |
    /// | --- | --- | --- |
    /// | fixed window | 2 | window start (Unix ms), count |
    /// | sliding window | 3 | window start (Unix ms), current count, previous count |
    /// | token bucket | 3 | spent (in `1 / period_ms` of a token), last update (Unix ms), when it is full again at the limit of that update (Unix ms) |
    /// | leaky bucket | 3 | level (in `1 / period_ms` of a request), last update (Unix ms), when it is empty again at the rate of that update (Unix ms) |
    /// | distinct | 17 | period start (Unix ms), then the 1024-bit map as 16 words, bit `i` in word `i / 64` at `1 << (i % 64)` |
    ///
    /// So a state is 34 bytes for a fixed window (42 for a sliding window or
    /// a bucket, 154 for distinct). A
    /// change of the layout takes a new version; [`State::decode`] refuses a
    /// version it does not know, so a store shared by instances of two
    /// versions fails loudly instead of misreading counts. Every time and count
    /// is at most 2^53 (the distinct map's words excepted), and a state decoded
    /// from any bytes that pass is one the algorithms answer without panicking
    /// (corrupted values decide, wrongly perhaps, but decide).
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::backend::{Check, State};
    /// use ratelimit_core::rules::RuleBuilder;
    /// use ratelimit_core::HashKey;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let rule = RuleBuilder::new("login")
    ///     .fixed_window(5, Duration::from_secs(60))
    ///     .key(["ip"])
    ///     .build()?;
    /// let (ns, quota) = (Check::namespace_of(&rule).into(), rule.quota(1));
    /// let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
    /// let check = Check::new(Arc::new(rule), ns, subject, quota, None, None);
    /// let (_, state) = State::step(&check, 1_767_225_600_000, None);
    /// let state = state.expect("a count keeps a state");
    ///
    /// let bytes = state.encode();
    /// assert_eq!((bytes[0], bytes.len()), (State::FORMAT_VERSION, 34));
    /// assert_eq!(State::decode(&bytes), Ok(state));
    /// assert!(State::decode(&bytes[..33]).is_err());
    /// # Ok::<(), ratelimit_core::rules::RuleError>(())
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut numbers = Vec::with_capacity(18);
        self.subject.to_words(&mut numbers);
        let mut out = Vec::with_capacity(HEAD + 8 * numbers.len());
        out.push(Self::FORMAT_VERSION);
        out.push(code(self.subject.algorithm()));
        out.extend_from_slice(&self.expires_at_ms.to_le_bytes());
        for n in numbers {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }

    /// The state `bytes` encode ([`State::encode`]).
    ///
    /// # Errors
    ///
    /// A [`StateDecodeError`] naming what is wrong: no bytes, a format
    /// version other than [`State::FORMAT_VERSION`], an unknown algorithm,
    /// a length that is not the algorithm's, or a time or count past 2^53
    /// (none is written; the distinct map's words may be any).
    pub fn decode(bytes: &[u8]) -> Result<State, StateDecodeError> {
        let (&version, rest) = bytes.split_first().ok_or_else(|| error("no bytes"))?;
        if version != Self::FORMAT_VERSION {
            return Err(error(format!(
                "format version {version}, this build reads {}",
                Self::FORMAT_VERSION
            )));
        }
        let (&a, rest) = rest.split_first().ok_or_else(|| error("no algorithm"))?;
        let a = algorithm(a).ok_or_else(|| error(format!("unknown algorithm {a}")))?;
        let want = HEAD + 8 * (1 + SubjectState::word_count(a));
        if bytes.len() != want {
            return Err(error(format!(
                "{} bytes for a {} state, which takes {want}",
                bytes.len(),
                a.as_str()
            )));
        }
        let mut numbers = rest
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()));
        let expires_at_ms = numbers.next().unwrap_or_default();
        let numbers: Vec<u64> = numbers.collect();
        let words = if a == Algorithm::Distinct {
            2
        } else {
            numbers.len()
        };
        if expires_at_ms > MAX_NUMBER || numbers[..words].iter().any(|&n| n > MAX_NUMBER) {
            return Err(error(format!(
                "a number past 2^53 in a {} state",
                a.as_str()
            )));
        }
        let subject = SubjectState::from_words(a, &numbers)
            .ok_or_else(|| error(format!("the numbers of a {} state", a.as_str())))?;
        Ok(State::from_parts(subject, expires_at_ms))
    }
}

#[cfg(test)]
mod tests;
