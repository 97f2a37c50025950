//! Rules written back as JSON load as equal rules (`from_json(to_json(x)) ==
//! x`) over generated rule sets using every field, and the committed JSON
//! Schema is the one the code generates.
//!
//! After changing the rule format, write the schema again with
//! `RATELIMIT_WRITE_SCHEMA=1 cargo test -p ratelimit-core --test rules_export`.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use ratelimit_core::rules::RuleSet;
use serde_json::{json, Map, Value};

/// 2026-01-01T00:00:00Z.
const NOW: u64 = 1_767_225_600_000;

const ALGORITHMS: [&str; 5] = [
    "fixed_window",
    "sliding_window",
    "token_bucket",
    "leaky_bucket",
    "distinct",
];
const EXPRESSIONS: [&str; 3] = [
    r#"http.request.uri.path eq "/login""#,
    r#"http.request.method eq "POST" and ip.src in {10.0.0.0/8}"#,
    r#"starts_with(http.request.uri.path, "/api/")"#,
];
const PARTNERS: [&str; 2] = ["ip", "jwt_claim:sub"];
const OTHERS: [&str; 8] = [
    "header:X-Tenant",
    "cookie:sid",
    "query:q",
    "host",
    "method",
    "country",
    "app:tenant",
    "ja4",
];
const DISTINCT_OF: [&str; 6] = ["path", "ip", "asnum", "ja4", "query:page", "app:user"];
const STATUSES: [&str; 5] = ["404", "401", "4xx", "1XX", "499"];
const TIMES: [&str; 4] = [
    "2026-11-01T00:00:00Z",
    "2025-01-01T00:00:00.250Z",
    "2030-06-15T12:30:00+02:00",
    "9999-12-31T23:59:59Z",
];

/// Durations written in several accepted forms: `"90s"`, `"1h30m"`, `"1d"`.
fn duration() -> impl Strategy<Value = String> {
    (1u64..=86_400, 0usize..3).prop_map(|(secs, form)| match form {
        0 => format!("{secs}s"),
        1 if secs % 60 == 0 => format!("{}m", secs / 60),
        _ if secs == 86_400 => "1d".to_owned(),
        _ => format!("{}h{}m{}s", secs / 3600, secs % 3600 / 60, secs % 60),
    })
}

prop_compose! {
    /// One valid rule using any field, as JSON.
    fn rule(id: String, site_wide_ok: bool)(
        algo in 0usize..5,
        expr in 0usize..4,
        limit_frac in 0.0f64..1.0,
        big in any::<bool>(),
        period in duration(),
        burst in 1u64..=1000,
        distinct_of in 0usize..6,
        partner in 0usize..2,
        others in proptest::sample::subsequence(OTHERS.to_vec(), 0..=3),
        statuses in option::of(proptest::sample::subsequence(STATUSES.to_vec(), 1..=3)),
        on_missing in option::of(0usize..3),
        log in option::of(any::<bool>()),
        penalty in option::of(duration()),
        fail_mode in option::of(0usize..3),
        expires_at in option::of(0usize..4),
        headers in option::of(any::<bool>()),
        cost_frac in option::of(0.0f64..1.0),
        allow_ips in option::of(vec(proptest::sample::select(vec!["10.0.0.0/8", "192.0.2.1", "2001:db8::/32"]), 0..3)),
        allow_values in option::of(vec((proptest::sample::select(OTHERS.to_vec()), vec("[a-z]{1,5}", 0..3)), 0..3)),
        canary in option::of(0u32..=10_000),
        response in option::of(any::<bool>()),
    ) -> Value {
        let algorithm = ALGORITHMS[algo];
        let distinct = algorithm == "distinct";
        let buckets = algorithm.contains("bucket");
        let max = if distinct { 1000 } else if big { 1_000_000_000 } else { 1000 };
        let limit = 1 + (limit_frac * (max - 1) as f64) as u64;
        let mut o = Map::new();
        o.insert("id".into(), id.clone().into());
        let expression = match expr {
            3 if site_wide_ok => "true",
            3 => EXPRESSIONS[0],
            i => EXPRESSIONS[i],
        };
        o.insert("expression".into(), expression.into());
        o.insert("algorithm".into(), algorithm.into());
        o.insert("limit".into(), limit.into());
        o.insert("period".into(), period.into());
        if buckets {
            o.insert("burst".into(), burst.into());
        }
        if distinct {
            o.insert("distinct_of".into(), DISTINCT_OF[distinct_of].into());
        }
        let mut key = vec![PARTNERS[partner]];
        key.extend(others);
        o.insert("key".into(), json!(key));
        let counts = statuses.is_some() && !distinct;
        if let (Some(s), false) = (statuses, distinct) {
            o.insert("count_statuses".into(), json!(s));
        }
        // `charge: response` is refused with distinct, count_statuses and cost.
        let written = response;
        let response = written == Some(true) && !distinct && !counts;
        match (written, response) {
            (_, true) => { o.insert("charge".into(), "response".into()); }
            (Some(_), false) => { o.insert("charge".into(), "request".into()); }
            (None, false) => {}
        }
        if let Some(m) = on_missing {
            o.insert("on_missing_key".into(), ["fallback_ip", "skip", "reject"][m].into());
        }
        let log = log.unwrap_or(false);
        if log {
            o.insert("action".into(), "log".into());
        }
        if let Some(p) = penalty {
            o.insert("penalty".into(), p.into());
        }
        if let Some(f) = fail_mode {
            let f = if distinct { f % 2 } else { f };
            o.insert("fail_mode".into(), ["open", "closed", "local"][f].into());
        }
        if let Some(t) = expires_at {
            o.insert("expires_at".into(), TIMES[t].into());
        }
        if let Some(h) = headers {
            o.insert("ratelimit_headers".into(), h.into());
        }
        if let (Some(c), false, false) = (cost_frac, distinct, response) {
            let cap = if buckets { burst } else { limit };
            o.insert("cost".into(), (1 + (c * (cap - 1) as f64) as u64).into());
        }
        if allow_ips.is_some() || allow_values.is_some() {
            let mut a = Map::new();
            if let Some(ips) = allow_ips {
                a.insert("ips".into(), json!(ips));
            }
            if let Some(values) = allow_values {
                let values: Map<String, Value> =
                    values.into_iter().map(|(k, v)| (k.to_owned(), json!(v))).collect();
                a.insert("values".into(), Value::Object(values));
            }
            o.insert("allow".into(), Value::Object(a));
        }
        if let (Some(bp), false) = (canary, log) {
            o.insert("canary".into(), (f64::from(bp) / 100.0).into());
        }
        Value::Object(o)
    }
}

/// 1 to 4 rules with unique ids; only the first two may be site-wide.
fn rule_set() -> impl Strategy<Value = Value> {
    (0usize..4)
        .prop_flat_map(|n| {
            (0..=n)
                .map(|i| rule(format!("rule-{i}"), i < 2))
                .collect::<Vec<_>>()
        })
        .prop_map(Value::Array)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn exported_rules_load_back_equal(json in rule_set()) {
        let text = json.to_string();
        let set = RuleSet::from_json_at(&text, NOW)
            .unwrap_or_else(|e| panic!("the generator made an invalid rule: {e}\n{text}"));
        let exported = set.to_json();
        let again = RuleSet::from_json_at(&exported, NOW)
            .unwrap_or_else(|e| panic!("the export does not load: {e}\n{exported}"));
        prop_assert_eq!(&again, &set, "{}", exported);
        prop_assert_eq!(again.to_json(), exported, "the export is stable");
    }
}

/// The committed `docs/rules.schema.json` is what `RuleSet::json_schema`
/// generates (written again with `RATELIMIT_WRITE_SCHEMA=1`).
#[test]
fn committed_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.schema.json");
    let generated = format!("{:#}\n", RuleSet::json_schema());
    if std::env::var_os("RATELIMIT_WRITE_SCHEMA").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.schema.json is stale: run \
         RATELIMIT_WRITE_SCHEMA=1 cargo test -p ratelimit-core --test rules_export"
    );
}
