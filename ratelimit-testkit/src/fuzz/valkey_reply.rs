//! Target `valkey_reply`: the decoder of script replies
//! ([`ratelimit_valkey::decode_reply`]), fed any bytes, held to what a
//! decoded reply must satisfy and to the core's own decisions.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{namespace, Check};
use ratelimit_core::rules::RuleBuilder;
use ratelimit_core::HashKey;
use ratelimit_valkey::decode_reply;
use redis::Value;

use super::input::Input;
use super::T0_MS;

/// The numbers a script sends are Lua doubles, exact below 2^53.
const EXACT: u64 = 1 << 53;
/// The most checks one input runs on the core.
const MAX_STEPS: usize = 16;

/// Target `valkey_reply`, in two parts.
///
/// 1. The bytes as a reply, a bulk string and an array of the numbers in
///    it. Whatever decodes must be a decision a script can send: admitted
///    without Retry-After or penalty; under a penalty refused, nothing
///    remaining, Retry-After and reset equal and within the penalty's end;
///    every number under 2^53. Written back as a reply (under each status
///    that means it), it decodes to itself, and a text reply that decodes
///    decodes the same as an array of its numbers.
/// 2. The bytes as a rule (algorithm, limit, period, burst, penalty) and up
///    to 16 checks (clock step, cost) run on the core's in-memory backend:
///    every decision the core makes, written as a script writes it,
///    decodes to the same decision. The scripts compute the core's
///    numbers, so a decision the reply cannot carry would be refused on
///    Valkey as a protocol error.
pub fn reply(data: &[u8]) {
    if let Ok(d) = decode_reply(&Value::BulkString(data.to_vec())) {
        holds(&d);
        assert_eq!(decode_reply(&as_array(data)), Ok(d), "{data:?}");
    }
    if let Ok(d) = decode_reply(&as_array(data)) {
        holds(&d);
    }
    core_decisions(data);
}

/// The bytes split at spaces: numbers as integers, the rest as strings.
fn as_array(data: &[u8]) -> Value {
    Value::Array(
        data.split(|&b| b == b' ')
            .map(|w| {
                match std::str::from_utf8(w)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) => Value::Int(n),
                    None => Value::BulkString(w.to_vec()),
                }
            })
            .collect(),
    )
}

/// What a decoded reply must satisfy, and its round trip.
fn holds(d: &Decision) {
    let until = d.blocked_until_ms.unwrap_or(0);
    assert!(
        [d.retry_after_ms, d.remaining, d.reset_ms, until]
            .iter()
            .all(|&n| n < EXACT),
        "{d:?}"
    );
    if d.allowed {
        assert_eq!((d.retry_after_ms, d.blocked_until_ms), (0, None), "{d:?}");
    }
    if let Some(until) = d.blocked_until_ms {
        assert!(!d.allowed && d.remaining == 0, "{d:?}");
        assert!(
            d.retry_after_ms == d.reset_ms && d.retry_after_ms > 0,
            "{d:?}"
        );
        assert!(until >= d.retry_after_ms, "{d:?}");
    }
    for text in encodings(d) {
        assert_eq!(
            decode_reply(&Value::BulkString(text.clone().into_bytes())),
            Ok(*d),
            "{text}"
        );
    }
}

/// `d` as a script writes it, under each status that means it (admitted:
/// 1, or 4 for a distinct request without a value; a penalty: 2 running, 3
/// started).
fn encodings(d: &Decision) -> Vec<String> {
    let statuses: &[u8] = match (d.allowed, d.blocked_until_ms) {
        (true, _) => &[1, 4],
        (false, Some(_)) => &[2, 3],
        (false, None) => &[0],
    };
    let until = d.blocked_until_ms.unwrap_or(0);
    statuses
        .iter()
        .map(|s| {
            format!(
                "{s} {} {} {} {until}",
                d.retry_after_ms, d.remaining, d.reset_ms
            )
        })
        .collect()
}

/// Part 2: the core's decisions for a rule and a timeline read from `data`
/// survive the reply format.
fn core_decisions(data: &[u8]) {
    let mut input = Input::new(data);
    let wide = |input: &mut Input<'_>| {
        let mut b = [0u8; 4];
        input.fill(&mut b);
        u64::from(u32::from_le_bytes(b))
    };
    let kind = input.byte() % 4;
    let limit = wide(&mut input) % 1_000_000_000 + 1;
    let period = Duration::from_millis(wide(&mut input) % 86_400_000 + 1);
    let burst = wide(&mut input) % 1_000_000_000 + 1;
    let penalty = wide(&mut input) % 3_600_000;
    let builder = RuleBuilder::new("fuzz").key(["ip"]);
    let builder = match kind {
        0 => builder.token_bucket(limit, period, burst),
        1 => builder.leaky_bucket(limit, period, burst),
        2 => builder.fixed_window(limit, period),
        _ => builder.sliding_window(limit, period),
    };
    let builder = if penalty > 0 {
        builder.penalty(Duration::from_millis(penalty))
    } else {
        builder
    };
    let Ok(rule) = builder.build() else {
        return;
    };
    let rule = Arc::new(rule);
    let ns: Arc<str> = namespace(&rule).into();
    let subject = HashKey::DEFAULT.digest(b"fuzz");
    let store = MemoryBackend::with_capacity(4);
    let mut now = T0_MS;
    for _ in 0..MAX_STEPS {
        if input.rest.is_empty() {
            break;
        }
        now += wide(&mut input) % (2 * period.as_millis() as u64 + 1);
        let cost = u64::from(input.byte() % 4) + 1;
        let quota = rule.quota(cost);
        let penalty_ms = rule.penalty_ms;
        let check = Check::new(rule.clone(), ns.clone(), subject, quota, penalty_ms, None);
        let d = store.check_one(&check, now);
        if quota.cost > quota.burst {
            continue; // refused before any script runs
        }
        holds(&d);
    }
}
