//! Bodies of the cargo-fuzz targets in `fuzz/`, shared with the corpus replay
//! test (`tests/fuzz_corpus.rs`) so both run exactly the same code.
//!
//! Each function takes the raw bytes of one input, never panics on its own
//! account, and asserts only what the documentation of the code under test
//! promises (round trips, 1-based error columns, positions in nginx errors).
//! A panic is a finding.
//!
//! Not a stable API: hidden from the documentation.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::keys::{self, KeyOutcome};
use crate::nginx::{KeyTemplate, Level, NginxConfig, Rate, ZoneKind, ZoneRegistry, ZoneSize};
use crate::request::{percent_decode, percent_decode_bytes};
use crate::rules::{DistinctOf, KeyPart, RuleError, RuleSet};
use crate::{Expression, HashKey, Limiter, ManualClock, RequestAttrs};

/// The time every target starts at: 2026-01-01T00:00:00Z, in Unix ms.
pub const T0_MS: u64 = 1_767_225_600_000;

/// Zones are loaded (memory reserved) only up to this many bytes in all, so
/// that a `zone=a:4g` input does not trip the fuzzer's malloc limit.
pub const MAX_LOADED_ZONE_BYTES: u64 = 1 << 20;

/// Target `rules_json`: [`RuleSet::from_json_at`] on the input as text
/// (when UTF-8) and, when it is a JSON list or a `{"rules": [...]}` object,
/// on the other shape too; then on the rule set that [`rules_value`] builds
/// from the same bytes. A set that loads is exercised through its accessors
/// and one [`Limiter`] check; an error must display and name its rule and
/// field without panicking.
pub fn rules_json(data: &[u8]) {
    load_rules(&rules_value(data).to_string());
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    load_rules(text);
    // The other accepted shape of the same rules.
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(list @ serde_json::Value::Array(_)) => {
            load_rules(&serde_json::json!({ "rules": list }).to_string());
        }
        Ok(serde_json::Value::Object(obj)) => {
            if let Some(list) = obj.get("rules") {
                load_rules(&list.to_string());
            }
        }
        _ => {}
    }
}

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

const RULE_FIELDS: [&str; 18] = [
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

fn load_rules(text: &str) {
    match RuleSet::from_json_at(text, T0_MS) {
        Ok(set) => exercise_rules(&set),
        Err(err) => check_rule_error(&err),
    }
}

fn check_rule_error(err: &RuleError) {
    let shown = err.to_string();
    let (rule, field) = (err.rule(), err.field());
    assert!(shown.ends_with(err.message()), "{shown:?}");
    if let Some(rule) = rule {
        assert!(shown.contains(&format!("{rule:?}")), "{shown:?}");
    }
    if let Some(field) = field {
        assert!(shown.contains(&format!("{field:?}")), "{shown:?}");
    }
}

fn exercise_rules(set: &RuleSet) {
    for warning in set.warnings() {
        let _ = warning.to_string();
        assert!(set.get(&warning.rule).is_some(), "{warning}");
    }
    let req = RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)))
        .with_method("POST")
        .with_path("/login")
        .with_query("q=1")
        .with_header("x-tenant", "acme")
        .with_header("cookie", "sid=s1");
    for rule in set.rules() {
        assert!(set.get(&rule.id).is_some());
        assert!(rule.same_state_as(rule));
        let again = Expression::parse(rule.expression.source());
        assert!(again.is_ok(), "{:?} no longer parses", rule.expression);
        for part in &rule.key {
            assert_eq!(KeyPart::parse(&part.to_string()).as_ref(), Ok(part));
        }
        if let Some(of) = &rule.distinct_of {
            assert_eq!(DistinctOf::parse(&of.to_string()).as_ref(), Ok(of));
            let _ = keys::distinct_value(of, &req);
        }
        let _ = rule.quota(rule.cost);
        let _ = (rule.is_site_wide(), rule.expired_at(T0_MS));
        let _ = (rule.counts_status(404), rule.counts_status(200));
        let _ = rule.expression.matches(&req);
        let _ = keys::subject(rule, &req, &HashKey::DEFAULT, false);
    }
    assert!(set.check_with(&[]).is_ok());
    run_limiter(set.clone(), &req, 2, 1500, 404);
}

/// Target `expression`: [`Expression::parse`] on the text before the first
/// NUL byte (UTF-8 only); when it parses, [`Expression::matches`] on the
/// request read from the bytes after it (see [`request_from_bytes`]).
pub fn expression(data: &[u8]) {
    let (src, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(src) = std::str::from_utf8(src) else {
        return;
    };
    match Expression::parse(src) {
        Ok(expr) => {
            assert_eq!(expr.to_string(), src);
            assert_eq!(expr.source(), src);
            let (req, _) = request_from_bytes(rest);
            let first = expr.matches(&req);
            assert_eq!(expr.clone().matches(&req), first);
            let _ = expr.is_always_true();
        }
        Err(err) => {
            // The 1-based column, at most one past the last character.
            let chars = src.chars().count();
            assert!(
                (1..=chars + 1).contains(&err.column()),
                "column {} of {} characters: {err}",
                err.column(),
                chars
            );
            assert_eq!(
                err.to_string(),
                format!("column {}: {}", err.column(), err.message())
            );
        }
    }
}

/// Target `nginx_config`: [`NginxConfig::parse`] and [`Level::parse`] on the
/// input (UTF-8 only). Errors must display and, since the input is text,
/// name a line and a column. A configuration that loads is checked against
/// the level, its zones' sizes, rates and keys must print back to what
/// parses to the same value, and when its zones are small it is loaded and
/// one request is checked and counted.
pub fn nginx_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = NginxConfig::parse(text);
    let level = Level::parse(text);
    for err in [config.as_ref().err(), level.as_ref().err()]
        .into_iter()
        .flatten()
    {
        let shown = err.to_string();
        assert!(shown.ends_with(err.message()), "{shown:?}");
        assert!(err.line().is_some() && err.column().is_some(), "{shown:?}");
        assert!(
            err.line() >= Some(1) && err.column() >= Some(1),
            "{shown:?}"
        );
    }
    let Ok(config) = config else {
        return;
    };
    let mut total: u64 = 0;
    for zone in config.zones() {
        let size = zone.size();
        assert_eq!(ZoneSize::parse(&size.to_string()).ok(), Some(size));
        let key = zone.key();
        assert_eq!(KeyTemplate::parse(key.as_str()).as_ref(), Ok(key));
        if let ZoneKind::Req(rate) = zone.kind() {
            assert_eq!(Rate::parse(&rate.to_string()).ok(), Some(rate));
        }
        assert!(config.zone(zone.name()).is_some());
        total = total.saturating_add(size.bytes());
    }
    let level = match level {
        Ok(level) if config.check_level(&level).is_ok() => level,
        _ => Level::default(),
    };
    if total > MAX_LOADED_ZONE_BYTES {
        return;
    }
    let Ok(zones) = ZoneRegistry::new().load(&config) else {
        return;
    };
    let req = RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)))
        .with_path("/wp-login.php")
        .with_header("x-tenant", "acme");
    if let Ok(policy) = zones.limit_req(&level) {
        for now in [T0_MS, T0_MS, T0_MS + 1, T0_MS + 60_000] {
            let d = policy.check(&req, now);
            let _ = (d.status(), d.delay(), d.rejected().map(|r| r.status()));
        }
    }
    if let Ok(policy) = zones.limit_conn(&level) {
        let first = policy.acquire(&req);
        let second = policy.acquire(&req);
        let _ = (first.status(), second.rejected().map(|r| r.status()));
        drop(second.into_permit());
        first.into_permit().release();
    }
}

/// Target `request_keys`: a request read from the input (see
/// [`request_from_bytes`]), keyed under a fixed rule set that covers every
/// key part, every `on_missing_key` mode and every `distinct_of` source,
/// with the request helpers and decoders on its parts; then the whole
/// [`Limiter::check`] (in-memory backend, [`ManualClock`]) on it.
///
/// After the request, the input holds a probe name (a length-prefixed
/// chunk), one byte choosing the group of rules the limiter runs, two bytes
/// of milliseconds to advance between checks and two bytes of the upstream
/// status.
pub fn request_keys(data: &[u8]) {
    let (req, rest) = request_from_bytes(data);
    let mut rest = Input::new(rest);
    let probe = rest.string();

    // The decoders and helpers, directly.
    let _ = percent_decode(&req.query);
    let _ = percent_decode(&req.path);
    let _ = percent_decode(&probe);
    let _ = percent_decode_bytes(&req.path);
    let normal = keys::normalize_path(&req.path);
    assert!(normal.starts_with(b"/"), "{normal:?}");
    let _ = (
        req.query_arg(&probe),
        req.query_arg_bytes(&probe),
        req.cookie(&probe),
    );
    let _ = (
        req.header(&probe),
        req.jwt_claim(&probe),
        req.app_value(&probe),
    );
    let _ = crate::nginx::normalize_path(req.path.as_bytes());
    let _ = crate::nginx::normalize_host(&req.host);

    let groups = rule_groups();
    for set in groups {
        for rule in set.rules() {
            for jwt_off in [false, true] {
                let got = keys::subject(rule, &req, &HashKey::DEFAULT, jwt_off);
                let again = keys::subject(rule, &req, &HashKey::DEFAULT, jwt_off);
                assert_eq!(got, again);
                if let KeyOutcome::Subject(d) = got {
                    let _ = d.to_hex();
                }
            }
            if let Some(of) = &rule.distinct_of {
                let _ = keys::distinct_value(of, &req);
            }
            if let Some(allow) = &rule.allow {
                let _ = (allow.matches(&req, false), allow.matches(&req, true));
            }
            let _ = rule.expression.matches(&req);
        }
    }

    let group = usize::from(rest.byte()) % groups.len();
    let advance = u64::from(u16::from_le_bytes([rest.byte(), rest.byte()]));
    let status = u16::from_le_bytes([rest.byte(), rest.byte()]);
    run_limiter(groups[group].clone(), &req, 3, advance, status);
}

/// Runs `checks` checks of `req` on a fresh limiter over `set` (in-memory
/// backend, small stores, a [`ManualClock`] at [`T0_MS`] moving `advance_ms`
/// between checks), answering each with the upstream `status`.
fn run_limiter(set: RuleSet, req: &RequestAttrs, checks: usize, advance_ms: u64, status: u16) {
    let clock = ManualClock::new(T0_MS);
    let limiter = Limiter::builder(set)
        .clock(clock.clone())
        .backend(crate::store::MemoryBackend::with_capacity(64))
        .penalty_cache_capacity(64)
        .local_capacity(64)
        .count_capacity(64)
        .build();
    for _ in 0..checks {
        let verdict = block_on(limiter.check(req));
        let _ = (verdict.retry_after_secs(), verdict.is_forward());
        let _ = (verdict.ratelimit_policy(), verdict.ratelimit());
        limiter.record_response(&verdict.ticket, status);
        clock.advance(Duration::from_millis(advance_ms));
    }
}

/// Polls `fut` once: the in-memory backend answers without waiting.
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the in-memory backend never waits"),
    }
}

/// Rules reading every key part, every `on_missing_key` mode and every
/// `distinct_of` source, in groups of at most 5 rules that are not site-wide
/// (the most a request runs), each with the two site-wide rules.
const RULE_GROUPS: [&str; 3] = [
    r#"[
    {"id": "jwt-tenant", "expression": "not false", "algorithm": "fixed_window", "limit": 2,
     "period": "1m", "key": ["jwt_claim:sub", "header:x-tenant"], "on_missing_key": "reject"},
    {"id": "cookie-query", "expression": "http.request.method ne \"TRACE\"",
     "algorithm": "sliding_window", "limit": 2, "period": "10s",
     "key": ["ip", "cookie:sid", "query:q"], "on_missing_key": "skip"},
    {"id": "host-method", "expression": "not false", "algorithm": "token_bucket", "limit": 1,
     "burst": 2, "period": "1s", "key": ["ip", "host", "method"], "penalty": "5s",
     "ratelimit_headers": true},
    {"id": "viewer", "expression": "not false", "algorithm": "leaky_bucket", "limit": 3,
     "burst": 3, "period": "1m", "key": ["country", "asnum", "ja4", "locale", "ip"],
     "on_missing_key": "fallback_ip", "cost": 2},
    {"id": "app-user", "expression": "not false", "algorithm": "fixed_window", "limit": 1,
     "period": "1s", "key": ["app:user", "jwt_claim:sub"], "action": "log"}
    ]"#,
    r#"[
    {"id": "d-path", "expression": "not false", "algorithm": "distinct", "distinct_of": "path",
     "limit": 2, "period": "1m", "key": ["ip"]},
    {"id": "d-query", "expression": "not false", "algorithm": "distinct",
     "distinct_of": "query:q", "limit": 1, "period": "1m", "key": ["ip", "header:x-tenant"],
     "on_missing_key": "reject"},
    {"id": "d-ip", "expression": "not false", "algorithm": "distinct", "distinct_of": "ip",
     "limit": 1, "period": "1m", "key": ["constant"], "penalty": "10s"},
    {"id": "d-asnum", "expression": "not false", "algorithm": "distinct",
     "distinct_of": "asnum", "limit": 1, "period": "1m", "key": ["ja4", "ip"],
     "on_missing_key": "skip"},
    {"id": "d-ja4", "expression": "not false", "algorithm": "distinct", "distinct_of": "ja4",
     "limit": 1, "period": "1m", "key": ["asnum"], "action": "log"}
    ]"#,
    r#"[
    {"id": "d-app", "expression": "not false", "algorithm": "distinct", "distinct_of": "app:user",
     "limit": 1, "period": "1m", "key": ["ip", "cookie:sid"], "fail_mode": "closed"},
    {"id": "allowed", "expression": "not false", "algorithm": "fixed_window", "limit": 1,
     "period": "1m", "key": ["ip", "query:q"], "canary": 50, "expires_at": "2026-01-01T00:00:01Z",
     "allow": {"ips": ["10.0.0.0/8", "2001:db8::/32"],
               "values": {"header:x-probe": ["k8s"], "jwt_claim:sub": ["svc"], "cookie:sid": ["s"],
                          "query:q": ["q"], "host": ["h"], "method": ["HEAD"], "country": ["FR"],
                          "asnum": ["1"], "ja4": ["j"], "locale": ["fr"], "app:user": ["u"]}}},
    {"id": "local", "expression": "ip.src in { 192.0.2.0/24 ::1 }", "algorithm": "sliding_window",
     "limit": 1, "period": "1s", "key": ["ip", "header:x-tenant"], "fail_mode": "local"},
    {"id": "count-404", "expression": "not false", "algorithm": "fixed_window", "limit": 1,
     "period": "1m", "key": ["ip"], "count_statuses": ["404", "4xx"], "penalty": "1m"},
    {"id": "count-log", "expression": "not false", "algorithm": "sliding_window", "limit": 1,
     "period": "1m", "key": ["jwt_claim:sub"], "count_statuses": ["1xx", "3xx", "429"],
     "action": "log", "on_missing_key": "skip"}
    ]"#,
];

const SITE_WIDE: &str = r#"
    {"id": "site-ip", "expression": "true", "algorithm": "fixed_window", "limit": 3,
     "period": "1s", "key": ["ip"], "penalty": "2s"},
    {"id": "site-all", "expression": " ( true ) ", "algorithm": "token_bucket", "limit": 100,
     "burst": 100, "period": "1s", "key": ["constant"]}"#;

/// The rule sets of [`request_keys`], loaded once.
fn rule_groups() -> &'static [RuleSet] {
    static GROUPS: OnceLock<Vec<RuleSet>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        RULE_GROUPS
            .iter()
            .map(|group| {
                let json = format!("[{SITE_WIDE},{}", group.trim().trim_start_matches('['));
                RuleSet::from_json_at(&json, T0_MS)
                    .unwrap_or_else(|e| panic!("the fixed rules must load: {e}"))
            })
            .collect()
    })
}

/// Reads a request from fuzzer bytes; returns it and the bytes left over.
///
/// A chunk is a length byte and that many bytes (fewer at the end of the
/// input); a missing byte reads as 0. In order:
///
/// 1. flags: bit 0 IPv6, bit 1 a cost, bit 2 verified JWT claims, bits 3
///    to 6 country, asnum, ja4 and locale;
/// 2. the address: 4 bytes, or 16 with bit 0;
/// 3. method, host, path and query: one chunk each (lossy UTF-8);
/// 4. with bit 1, the cost: 8 bytes little-endian;
/// 5. a count byte (mod 16) of headers, each a name chunk and a value chunk
///    (raw bytes, maybe not UTF-8);
/// 6. a count byte (mod 4) of `Cookie` header values (raw chunks);
/// 7. with bit 2, a count byte (mod 8) of claims, each a name and a value;
/// 8. country, asnum, ja4 and locale chunks, each when its bit is set;
/// 9. a count byte (mod 4) of application values, each a name and a value.
pub fn request_from_bytes(data: &[u8]) -> (RequestAttrs, &[u8]) {
    let mut input = Input::new(data);
    let flags = input.byte();
    let ip = if flags & 1 == 0 {
        let mut b = [0u8; 4];
        input.fill(&mut b);
        IpAddr::V4(Ipv4Addr::from(b))
    } else {
        let mut b = [0u8; 16];
        input.fill(&mut b);
        IpAddr::V6(Ipv6Addr::from(b))
    };
    let mut req = RequestAttrs::new(ip)
        .with_method(input.string())
        .with_host(input.string())
        .with_path(input.string())
        .with_query(input.string());
    if flags & 2 != 0 {
        let mut b = [0u8; 8];
        input.fill(&mut b);
        req = req.with_cost(u64::from_le_bytes(b));
    }
    for _ in 0..input.byte() % 16 {
        let name = input.string();
        req = req.with_header(&name, input.chunk());
    }
    for _ in 0..input.byte() % 4 {
        req = req.with_header("cookie", input.chunk());
    }
    if flags & 4 != 0 {
        let claims = (0..input.byte() % 8)
            .map(|_| (input.string(), input.string()))
            .collect();
        req = req.with_jwt_claims(claims);
    }
    let mut optional = |bit: u8| (flags & bit != 0).then(|| input.string());
    req.country = optional(8);
    req.asnum = optional(16);
    req.ja4 = optional(32);
    req.locale = optional(64);
    for _ in 0..input.byte() % 4 {
        let name = input.string();
        req = req.with_app_value(name, input.string());
    }
    (req, input.rest)
}

/// Fuzzer bytes, read front to back; reads past the end give zeros.
struct Input<'a> {
    rest: &'a [u8],
}

impl<'a> Input<'a> {
    fn new(rest: &'a [u8]) -> Self {
        Self { rest }
    }

    fn byte(&mut self) -> u8 {
        let (first, rest) = self
            .rest
            .split_first()
            .map_or((0, &[][..]), |(b, r)| (*b, r));
        self.rest = rest;
        first
    }

    fn fill(&mut self, out: &mut [u8]) {
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
    }

    fn chunk(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte()).min(self.rest.len());
        let (chunk, rest) = self.rest.split_at(n);
        self.rest = rest;
        chunk
    }

    fn string(&mut self) -> String {
        String::from_utf8_lossy(self.chunk()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_rule_groups_load() {
        assert_eq!(rule_groups().len(), 3);
        for set in rule_groups() {
            assert!(set.rules().len() <= 7);
        }
    }

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

    #[test]
    fn empty_inputs_run() {
        rules_json(b"");
        expression(b"");
        nginx_config(b"");
        request_keys(b"");
    }
}
