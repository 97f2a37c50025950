//! Typed decoding of a script's reply: the decision itself.
//!
//! A script returns `"status retry remaining reset until"`, five decimal
//! integers in one string (cheaper for Valkey than an array reply): what
//! it did, Retry-After, remaining and reset in ms, and a penalty's end (see
//! `scripts/prelude.lua`). The scripts compute these numbers exactly as the
//! core does (a differential test holds them to it), so nothing is
//! recomputed here. The same five as an array are accepted too.
//!
//! Decoding never panics: anything unexpected (a wrong count, a number at
//! or above 2^53, a status out of range, numbers that contradict the
//! status) is a `Protocol` error, never a silent answer.

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{BackendError, BackendErrorKind};
use redis::Value;

/// Decodes one reply of the rate-limit scripts into the decision, exactly
/// as [`ValkeyBackend`](crate::ValkeyBackend) does with every reply it gets.
///
/// A reply is `"status retry remaining reset until"`, five decimal integers
/// in one bulk string (or the same five as an array): what the script did
/// (0 refused, 1 admitted, 2 blocked by a penalty, 3 penalty started, 4 not
/// counted), Retry-After, remaining and reset in ms, and a penalty's end in
/// Unix ms (0 without one).
///
/// This is a seam for fuzzing and for replaying recorded replies; the
/// backend needs no help from it. `reply` is a value of the `redis` crate
/// (redis-rs), the client this crate is built on.
///
/// # Errors
///
/// A `Protocol` [`BackendError`] for anything a script does not send: a
/// wrong shape, a number at or past 2^53, an unknown status, or numbers
/// that contradict the status. Never panics, whatever the value.
///
/// # Examples
///
/// ```
/// // Admitted: 4 left, the window whole again in 60 s.
/// let reply = redis::Value::BulkString(b"1 0 4 60000 0".to_vec());
/// let d = ratelimit_valkey::decode_reply(&reply).expect("a valid reply");
/// assert!(d.allowed);
/// assert_eq!(d.remaining, 4);
///
/// // Admitted with a Retry-After: no script sends that.
/// let bad = redis::Value::BulkString(b"1 5000 4 60000 0".to_vec());
/// assert!(ratelimit_valkey::decode_reply(&bad).is_err());
/// ```
pub fn decode_reply(reply: &Value) -> Result<Decision, BackendError> {
    decode(reply)
}

/// What the script did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
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

/// Numbers in a reply.
const FIELDS: usize = 5;

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

fn numbers(v: &Value) -> Result<[u64; FIELDS], BackendError> {
    let mut n = [0u64; FIELDS];
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
            if items.len() != FIELDS {
                return Err(protocol(format!(
                    "expected {FIELDS} items, got {}",
                    items.len()
                )));
            }
            for (slot, item) in n.iter_mut().zip(items) {
                *slot = number(item)?;
            }
        }
        Value::ServerError(e) => return Err(protocol(format!("script error: {e:?}"))),
        other => return Err(protocol(format!("expected a reply, got {other:?}"))),
    }
    Ok(n)
}

/// Decodes one script reply into the decision.
pub(crate) fn decode(v: &Value) -> Result<Decision, BackendError> {
    let n = numbers(v)?;
    // A script computes in Lua doubles, exact below 2^53: anything larger
    // did not come from our scripts.
    if n.iter().any(|&x| x >= 1 << 53) {
        return Err(protocol(format!("reply out of range: {n:?}")));
    }
    let [status, retry, remaining, reset, until] = n;
    let status = match status {
        0 => Status::Refused,
        1 => Status::Admitted,
        2 => Status::Blocked,
        3 => Status::PenaltyStarted,
        4 => Status::Uncounted,
        s => return Err(protocol(format!("unknown status {s}"))),
    };
    let consistent = match status {
        Status::Admitted | Status::Uncounted => retry == 0 && until == 0,
        Status::Refused => until == 0,
        // A penalty's refusal: nothing remains, its end is `until` and both
        // Retry-After and reset are the time left to it.
        Status::Blocked | Status::PenaltyStarted => {
            remaining == 0 && retry == reset && retry > 0 && until >= retry
        }
    };
    if !consistent {
        return Err(protocol(format!("inconsistent reply {status:?} {n:?}")));
    }
    Ok(match status {
        Status::Admitted | Status::Uncounted => Decision::allow(remaining, reset),
        Status::Refused => Decision::deny(retry, remaining, reset),
        Status::Blocked | Status::PenaltyStarted => {
            let mut d = Decision::deny(retry, 0, reset);
            d.blocked_until_ms = Some(until);
            d
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Result<Decision, BackendError> {
        decode(&Value::BulkString(s.as_bytes().to_vec()))
    }

    #[test]
    fn bad_replies_are_protocol_errors() {
        let bad = [
            Value::Nil,
            Value::Int(3),
            Value::Array(vec![Value::Int(1)]),
            Value::Array(vec![Value::Int(9); 5]),
            Value::Array(vec![Value::Int(-1); 5]),
            Value::Array(vec![Value::SimpleString("x".into()); 5]),
            Value::BulkString(b"1 0 3 4".to_vec()),
            Value::BulkString(b"1 0 3 4 0 6".to_vec()),
            Value::BulkString(b"0 2 3 4 -5".to_vec()),
            Value::BulkString(b"1  0 3 4 0".to_vec()),
            Value::BulkString(b"9 0 3 4 0".to_vec()),
            Value::BulkString(b"1 0 9007199254740992 4 0".to_vec()),
            Value::BulkString(vec![0xff; 9]),
            Value::BulkString(Vec::new()),
            // Numbers that contradict the status.
            Value::BulkString(b"1 5 3 4 0".to_vec()),
            Value::BulkString(b"1 0 3 4 7".to_vec()),
            Value::BulkString(b"0 5 3 4 7".to_vec()),
            Value::BulkString(b"2 5 1 5 9".to_vec()),
            Value::BulkString(b"2 5 0 6 9".to_vec()),
            Value::BulkString(b"3 0 0 0 9".to_vec()),
            Value::BulkString(b"3 5 0 5 4".to_vec()),
            Value::BulkString(b"4 1 0 0 0".to_vec()),
        ];
        for v in bad {
            let e = decode(&v).expect_err("refused");
            assert_eq!(e.kind(), BackendErrorKind::Protocol, "{v:?}");
        }
    }

    #[test]
    fn each_status_decodes_to_its_decision() {
        assert_eq!(text("1 0 3 40000 0"), Ok(Decision::allow(3, 40_000)));
        assert_eq!(text("4 0 5 0 0"), Ok(Decision::allow(5, 0)));
        assert_eq!(
            text("0 12000 1 72000 0"),
            Ok(Decision::deny(12_000, 1, 72_000))
        );
        let mut blocked = Decision::deny(235_000, 0, 235_000);
        blocked.blocked_until_ms = Some(1_767_225_905_000);
        assert_eq!(text("2 235000 0 235000 1767225905000"), Ok(blocked));
        let mut started = Decision::deny(300_000, 0, 300_000);
        started.blocked_until_ms = Some(1_767_225_905_000);
        assert_eq!(text("3 300000 0 300000 1767225905000"), Ok(started));
        let array = Value::Array(vec![
            Value::Int(0),
            Value::Int(12_000),
            Value::BulkString(b"1".to_vec()),
            Value::Int(72_000),
            Value::Int(0),
        ]);
        assert_eq!(decode(&array), Ok(Decision::deny(12_000, 1, 72_000)));
        let big = text("1 0 9007199254740991 9007199254740991 0").expect("decodes");
        assert_eq!(big.remaining, 9_007_199_254_740_991);
    }

    /// `distinct.lua` computes the estimate as
    /// `floor(-1024 * log(clear / 1024) + 0.5)` in doubles. It equals the
    /// core's table, and no entry lies within 10^-6 of a half, so a libm
    /// that differs in the last bits still rounds the same way.
    #[test]
    fn the_distinct_estimate_in_lua_rounds_like_the_core() {
        use ratelimit_core::algorithm::distinct;
        for set in 0..distinct::BITS {
            let x = -1024.0 * (f64::from(distinct::BITS - set) / 1024.0).ln();
            assert_eq!((x + 0.5).floor() as u32, distinct::estimate(set), "{set}");
            assert!((x - x.floor() - 0.5).abs() > 1e-6, "{set}: {x}");
        }
    }
}
