//! A JSON rule set shaped like the real thing, built from fuzzer bytes.

use super::input::Input;

/// A JSON rule set shaped like the real thing, chosen by fuzzer bytes: a
/// list or a `{"rules": [...]}` object of up to 3 rule objects, each
/// optionally starting from a plausible rule, then up to 15 fields, known or
/// not, whose values come from a pool of valid and borderline values, from
/// the input's own bytes (any string), or are a JSON value of another type.
pub fn rules_value(data: &[u8]) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let mut input = Input::new(data);
    let shape = input.byte();
    let rules: Vec<Value> = (0..input.byte() % 4)
        .map(|_| {
            let mut rule = Map::new();
            if !input.byte().is_multiple_of(4) {
                for field in ["id", "expression", "algorithm", "limit", "period", "key"] {
                    rule.insert(field.to_owned(), field_value(&mut input, field));
                }
            }
            for _ in 0..input.byte() % 16 {
                let i = usize::from(input.byte());
                let field = match RULE_FIELDS.get(i % (RULE_FIELDS.len() + 1)) {
                    Some(f) => (*f).to_owned(),
                    None => input.string(),
                };
                let value = field_value(&mut input, &field);
                rule.insert(field, value);
            }
            Value::Object(rule)
        })
        .collect();
    match shape % 8 {
        0 => json!({ "rules": rules }),
        1 => json!({ "rules": rules, "version": 1 }),
        2 => any_value(&mut input, 2),
        _ => Value::Array(rules),
    }
}

const RULE_FIELDS: [&str; 19] = [
    "id",
    "expression",
    "algorithm",
    "limit",
    "period",
    "burst",
    "distinct_of",
    "count_statuses",
    "key",
    "on_missing_key",
    "action",
    "penalty",
    "fail_mode",
    "expires_at",
    "ratelimit_headers",
    "cost",
    "allow",
    "canary",
    "charge",
];

const KEY_PARTS: [&str; 16] = [
    "ip",
    "jwt_claim:sub",
    "header:x-tenant",
    "header:X-Tenant",
    "cookie:sid",
    "query:q",
    "host",
    "method",
    "country",
    "asnum",
    "ja4",
    "locale",
    "app:user",
    "constant",
    "header:",
    "header:a b",
];

/// A value for `field`: from its pool, the input's bytes, or any JSON.
fn field_value(input: &mut Input<'_>, field: &str) -> serde_json::Value {
    use serde_json::json;
    let pool: &[&str] = match field {
        "id" => &["r1", "login", "a.b-c_d", "a b", ""],
        "expression" => &[
            "true",
            " ( true ) ",
            "not false",
            "http.request.uri.path eq \"/login\"",
            "ip.src in { 10.0.0.0/8 }",
            "http.host matches \"(\"",
        ],
        "algorithm" => &[
            "fixed_window",
            "sliding_window",
            "token_bucket",
            "leaky_bucket",
            "distinct",
        ],
        "period" | "penalty" => &["1s", "1m", "5m", "24h", "1h30m", "25h", "0s", "1.5m", "5ms"],
        "distinct_of" => &[
            "path", "query:q", "ip", "asnum", "ja4", "app:user", "query:", "cookie:x",
        ],
        "on_missing_key" => &["fallback_ip", "skip", "reject"],
        "action" => &["block", "log"],
        "fail_mode" => &["open", "closed", "local"],
        "charge" => &["request", "response", "Response"],
        "expires_at" => &[
            "2026-11-01T00:00:00Z",
            "2026-01-01T01:00:00.25+01:00",
            "2025-01-01t00:00:00z",
            "1969-12-31T23:59:59Z",
            "2026-02-30T00:00:00Z",
        ],
        "limit" | "burst" | "cost" | "canary" => return number(input),
        "ratelimit_headers" => return json!(!input.byte().is_multiple_of(3)),
        "key" => return strings(input, &KEY_PARTS),
        "count_statuses" => return strings(input, &["404", "4xx", "429", "1xx", "5xx", "500"]),
        "allow" => {
            let ips = strings(
                input,
                &["10.0.0.0/8", "2001:db8::/32", "192.0.2.1", "::1/129"],
            );
            let mut values = serde_json::Map::new();
            for _ in 0..input.byte() % 3 {
                let part = match KEY_PARTS.get(usize::from(input.byte()) % (KEY_PARTS.len() + 1)) {
                    Some(p) => (*p).to_owned(),
                    None => input.string(),
                };
                values.insert(part, strings(input, &["k8s", "svc", ""]));
            }
            return match input.byte() % 4 {
                0 => json!({ "ips": ips }),
                1 => json!({ "values": values }),
                2 => json!({ "ips": ips, "values": values, "cidrs": [] }),
                _ => json!({ "ips": ips, "values": values }),
            };
        }
        _ => &[],
    };
    pooled(input, pool)
}

/// A string of `pool`, a string of the input's bytes, or any value.
fn pooled(input: &mut Input<'_>, pool: &[&str]) -> serde_json::Value {
    let i = usize::from(input.byte()) % (pool.len() + 2);
    match pool.get(i) {
        Some(s) => serde_json::Value::from(*s),
        None if i == pool.len() => serde_json::Value::from(input.string()),
        None => any_value(input, 1),
    }
}

/// A list of up to 7 strings, each as [`pooled`].
fn strings(input: &mut Input<'_>, pool: &[&str]) -> serde_json::Value {
    let n = input.byte() % 8;
    serde_json::Value::Array((0..n).map(|_| pooled(input, pool)).collect())
}

/// A number, borderline or from the input's bytes.
fn number(input: &mut Input<'_>) -> serde_json::Value {
    use serde_json::Value;
    let mut bytes = [0u8; 8];
    match input.byte() % 14 {
        0 => Value::from(0),
        1 => Value::from(1),
        2 => Value::from(2),
        3 => Value::from(5),
        4 => Value::from(1000),
        5 => Value::from(1001),
        6 => Value::from(1_000_000_000),
        7 => Value::from(1_000_000_001),
        8 => Value::from(u64::MAX),
        9 => Value::from(-1),
        10 => Value::from(1.5),
        11 => Value::from(1e15),
        12 => {
            input.fill(&mut bytes);
            Value::from(u64::from_le_bytes(bytes))
        }
        _ => {
            input.fill(&mut bytes);
            serde_json::Number::from_f64(f64::from_le_bytes(bytes))
                .map_or(Value::Null, Value::Number)
        }
    }
}

/// Any JSON value, nested at most `depth` deep.
fn any_value(input: &mut Input<'_>, depth: u8) -> serde_json::Value {
    use serde_json::Value;
    match input.byte() % 7 {
        0 => Value::Null,
        1 => Value::Bool(input.byte().is_multiple_of(2)),
        2 => number(input),
        3 => Value::from(input.string()),
        4 if depth > 0 => Value::Array(
            (0..input.byte() % 4)
                .map(|_| any_value(input, depth - 1))
                .collect(),
        ),
        5 if depth > 0 => Value::Object(
            (0..input.byte() % 4)
                .map(|_| (input.string(), any_value(input, depth - 1)))
                .collect(),
        ),
        _ => Value::from(""),
    }
}

#[cfg(test)]
mod tests {
    use ratelimit_core::rules::RuleSet;

    use super::*;
    use crate::fuzz::T0_MS;

    #[test]
    fn structured_rule_sets_often_load() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut loaded = 0;
        for _ in 0..2000 {
            let data: Vec<u8> = (0..64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let value = rules_value(&data);
            if RuleSet::from_json_at(&value.to_string(), T0_MS).is_ok() {
                loaded += 1;
            }
        }
        assert!(loaded > 20, "only {loaded} of 2000 load");
    }
}
