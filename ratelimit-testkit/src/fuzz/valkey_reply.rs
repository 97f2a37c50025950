//! Target `valkey_reply`: the decoder of script replies
//! ([`ratelimit_valkey::decode_reply`]), fed any bytes.

use std::sync::Arc;

use ratelimit_core::backend::Check;
use ratelimit_core::rules::RuleBuilder;
use redis::Value;

/// Decodes `data` as a script reply (a bulk string, and an array of the
/// numbers in it) and, when it decodes, turns it into a decision for a
/// check of each algorithm. Never panics, whatever the bytes.
pub fn reply(data: &[u8]) {
    let as_array = Value::Array(
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
    );
    for value in [Value::BulkString(data.to_vec()), as_array] {
        for check in checks() {
            let _ = ratelimit_valkey::decode_reply(&value, &check);
        }
    }
}

fn checks() -> Vec<Check> {
    let period = std::time::Duration::from_secs(60);
    let rules = [
        RuleBuilder::new("f").fixed_window(5, period),
        RuleBuilder::new("s").sliding_window(5, period),
        RuleBuilder::new("t").token_bucket(10, period, 5),
        RuleBuilder::new("l").leaky_bucket(10, period, 5),
        RuleBuilder::new("d").distinct("path", 3, period),
    ];
    rules
        .into_iter()
        .filter_map(|b| b.key(["ip"]).penalty(period).build().ok())
        .map(|rule| {
            let rule = Arc::new(rule);
            let ns: Arc<str> = ratelimit_core::limiter::namespace(&rule).into();
            let quota = rule.quota(1);
            Check::new(
                rule,
                ns,
                ratelimit_core::KeyDigest([7; 16]),
                quota,
                Some(60_000),
                Some(3),
            )
        })
        .collect()
}
