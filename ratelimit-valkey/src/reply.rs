//! Typed decoding of a script's reply, and the decision computed from it
//! with the core's own functions.
//!
//! A script returns `"status now until s1 s2 s3"`, six decimal integers in
//! one string (cheaper for Valkey than an array reply): whether it admitted
//! the request, the time it used, a penalty's end, and the state it found.
//! The same six as an array are accepted too.
//! The decision's numbers (Retry-After, remaining, reset) are recomputed
//! here by running the core algorithm on that state, in exact integer
//! arithmetic, and the admission is cross-checked against the script's: a
//! disagreement is a `Protocol` error, never a silent answer. Decoding never
//! panics: anything unexpected is a `Protocol` error.

use ratelimit_core::algorithm::{
    distinct, fixed_window, leaky_bucket, penalty, sliding_window, token_bucket, Algorithm,
    Decision,
};
use ratelimit_core::backend::{BackendError, BackendErrorKind, Check};
use redis::Value;

/// Decodes one reply of the rate-limit scripts and computes the decision
/// for `check` from it, exactly as [`ValkeyBackend`](crate::ValkeyBackend)
/// does with every reply it gets.
///
/// A reply is `"status now until s1 s2 s3"`, six decimal integers in one
/// bulk string, or the same six as an array. The decision's numbers are
/// recomputed by the core from the state the script found and cross-checked
/// against what the script did.
///
/// This is a seam for fuzzing and for replaying recorded replies; the
/// backend needs no help from it. `reply` is a value of the `redis` crate
/// (redis-rs), the client this crate is built on.
///
/// # Errors
///
/// A `Protocol` [`BackendError`] for anything a script does not send: a
/// wrong shape, a number past 2^53, an unknown status, or a state the
/// core's algorithm disagrees with. Never panics, whatever the value.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use ratelimit_core::backend::Check;
/// use ratelimit_core::limiter::namespace;
/// use ratelimit_core::rules::RuleBuilder;
/// use ratelimit_core::HashKey;
///
/// let rule = RuleBuilder::new("login")
///     .fixed_window(5, Duration::from_secs(60))
///     .key(["ip"])
///     .build()?;
/// let quota = rule.quota(1);
/// let rule = Arc::new(rule);
/// let check = Check::new(
///     rule.clone(),
///     namespace(&rule).into(),
///     HashKey::DEFAULT.digest(b"203.0.113.7"),
///     quota,
///     None,
///     None,
/// );
/// // Admitted at 60 s into the window, the first request counted.
/// let reply = redis::Value::BulkString(b"1 1767225660000 0 1 0 0".to_vec());
/// let d = ratelimit_valkey::decode_reply(&reply, &check).expect("a valid reply");
/// assert!(d.allowed);
/// assert_eq!(d.remaining, 4);
///
/// let bad = redis::Value::BulkString(b"7 0 0 0 0 0".to_vec());
/// assert!(ratelimit_valkey::decode_reply(&bad, &check).is_err());
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
pub fn decode_reply(reply: &Value, check: &Check) -> Result<Decision, BackendError> {
    Reply::decode(reply).and_then(|r| r.decision(check))
}

/// What the script did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Refused, no penalty started.
    Refused,
    /// Admitted.
    Admitted,
    /// Blocked by a running penalty, nothing counted.
    Blocked,
    /// Refused, and a penalty started.
    PenaltyStarted,
    /// A distinct request without a value: not counted.
    Uncounted,
}

/// A decoded reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) status: Status,
    pub(crate) now: u64,
    pub(crate) until: u64,
    pub(crate) state: [u64; 3],
}

fn protocol(detail: impl Into<String>) -> BackendError {
    BackendError::new(BackendErrorKind::Protocol, detail)
}

fn number(v: &Value) -> Result<u64, BackendError> {
    match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| protocol(format!("negative number {i}"))),
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| protocol("not a number")),
        other => Err(protocol(format!("expected a number, got {other:?}"))),
    }
}

impl Reply {
    /// Decodes one script reply.
    pub(crate) fn decode(v: &Value) -> Result<Self, BackendError> {
        let mut n = [0u64; 6];
        match v {
            Value::BulkString(b) => {
                let text = std::str::from_utf8(b).map_err(|_| protocol("reply not UTF-8"))?;
                let mut items = text.split(' ');
                for slot in &mut n {
                    *slot = items
                        .next()
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(|| protocol(format!("bad reply {text:?}")))?;
                }
                if items.next().is_some() {
                    return Err(protocol(format!("bad reply {text:?}")));
                }
            }
            Value::Array(items) => {
                if items.len() != 6 {
                    return Err(protocol(format!("expected 6 items, got {}", items.len())));
                }
                for (slot, item) in n.iter_mut().zip(items) {
                    *slot = number(item)?;
                }
            }
            Value::ServerError(e) => return Err(protocol(format!("script error: {e:?}"))),
            other => return Err(protocol(format!("expected a reply, got {other:?}"))),
        }
        // A script computes in Lua doubles, exact below 2^53: anything
        // larger did not come from our scripts, and would overflow the
        // core's time arithmetic.
        if n.iter().any(|&x| x >= 1 << 53) {
            return Err(protocol(format!("reply out of range: {n:?}")));
        }
        let status = match n[0] {
            0 => Status::Refused,
            1 => Status::Admitted,
            2 => Status::Blocked,
            3 => Status::PenaltyStarted,
            4 => Status::Uncounted,
            s => return Err(protocol(format!("unknown status {s}"))),
        };
        Ok(Self {
            status,
            now: n[1],
            until: n[2],
            state: [n[3], n[4], n[5]],
        })
    }

    /// The decision for `check`, computed by the core from the state the
    /// script found, cross-checked against what the script did.
    pub(crate) fn decision(&self, check: &Check) -> Result<Decision, BackendError> {
        let now = self.now;
        let q = &check.quota;
        let [s1, s2, s3] = self.state;
        let mut algo_allowed = None;
        let mut algo = || {
            let d = match check.rule.algorithm {
                Algorithm::FixedWindow => {
                    let mut s = fixed_window::State::default();
                    (s.window_start, s.count) = (s1, s2);
                    fixed_window::check(&mut s, now, q)
                }
                Algorithm::SlidingWindow => {
                    let mut s = sliding_window::State::default();
                    (s.window_start, s.current, s.previous) = (s1, s2, s3);
                    sliding_window::check(&mut s, now, q)
                }
                Algorithm::TokenBucket => {
                    let mut s = token_bucket::State::default();
                    (s.spent, s.updated_ms) = (s1, s2);
                    token_bucket::check(&mut s, now, q)
                }
                Algorithm::LeakyBucket => {
                    let mut s = leaky_bucket::State::default();
                    (s.tat_ms, s.tat_frac) = (s1, s2);
                    leaky_bucket::check(&mut s, now, q)
                }
                _ => distinct_decision(s1, s2, now, q),
            };
            algo_allowed = Some(d.allowed);
            d
        };
        let mut blocked_until = match self.status {
            Status::Blocked => self.until,
            _ => 0,
        };
        let d = match self.status {
            Status::Uncounted => penalty::check(&mut blocked_until, now, check.penalty_ms, || {
                Decision::allow(q.limit, 0)
            }),
            _ => penalty::check(&mut blocked_until, now, check.penalty_ms, &mut algo),
        };
        let consistent = match self.status {
            Status::Admitted => algo_allowed == Some(true) && d.allowed,
            Status::Refused => algo_allowed == Some(false) && d.blocked_until_ms.is_none(),
            Status::Blocked => d.blocked_until_ms == Some(self.until) && self.until > now,
            Status::PenaltyStarted => {
                algo_allowed == Some(false) && d.blocked_until_ms == Some(self.until)
            }
            Status::Uncounted => d.allowed,
        };
        if consistent {
            Ok(d)
        } else {
            Err(protocol(format!(
                "script and core disagree: {self:?} vs {d:?} for {:?}",
                check.rule.algorithm
            )))
        }
    }
}

/// The distinct decision from the period's start and the count of bits set,
/// by the core's function: a map with that many bits set gives the same
/// count, and bit 0 is among them (the script has just set the value's bit).
fn distinct_decision(
    period_start: u64,
    set: u64,
    now: u64,
    q: &ratelimit_core::algorithm::Quota,
) -> Decision {
    let mut s = distinct::State {
        period_start,
        bits: [0; 16],
    };
    let set = set.clamp(1, u64::from(distinct::BITS));
    for i in 0..set as usize {
        s.bits[i / 64] |= 1 << (i % 64);
    }
    distinct::check(&mut s, now, q, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_replies_are_protocol_errors() {
        let bad = [
            Value::Nil,
            Value::Int(3),
            Value::Array(vec![Value::Int(1)]),
            Value::Array(vec![Value::Int(9); 6]),
            Value::Array(vec![Value::Int(-1); 6]),
            Value::Array(vec![Value::SimpleString("x".into()); 6]),
            Value::BulkString(b"1 2 3 4 5".to_vec()),
            Value::BulkString(b"1 2 3 4 5 6 7".to_vec()),
            Value::BulkString(b"1 2 3 4 5 -6".to_vec()),
            Value::BulkString(b"1  2 3 4 5 6".to_vec()),
            Value::BulkString(b"9 2 3 4 5 6".to_vec()),
            Value::BulkString(vec![0xff; 11]),
            Value::BulkString(Vec::new()),
        ];
        for v in bad {
            let e = Reply::decode(&v).expect_err("refused");
            assert_eq!(e.kind(), BackendErrorKind::Protocol, "{v:?}");
        }
    }

    #[test]
    fn a_reply_decodes() {
        let v = Value::Array(vec![
            Value::Int(1),
            Value::Int(1000),
            Value::Int(0),
            Value::Int(960),
            Value::Int(2),
            Value::BulkString(b"0".to_vec()),
        ]);
        let r = Reply::decode(&v).expect("decodes");
        assert_eq!(r.status, Status::Admitted);
        assert_eq!(r.state, [960, 2, 0]);
        let s = Reply::decode(&Value::BulkString(b"1 1000 0 960 2 0".to_vec())).expect("decodes");
        assert_eq!(s, r);
        let big = Reply::decode(&Value::BulkString(
            b"3 1767225600000 1767225900000 9007199254740991 0 0".to_vec(),
        ))
        .expect("decodes");
        assert_eq!(big.status, Status::PenaltyStarted);
        assert_eq!(big.until, 1_767_225_900_000);
        assert_eq!(big.state[0], 9_007_199_254_740_991);
    }
}
