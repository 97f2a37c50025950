//! Target `request_keys`: request parsing, keys and the whole limiter on a
//! request read from fuzzer bytes.

use std::sync::OnceLock;

use ratelimit_core::backend::{self, KeyOutcome};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::HashKey;

use super::input::Input;
use super::limiter::run_limiter;
use super::request::request_from_bytes;
use super::T0_MS;

/// Target `request_keys`: a request read from the input (see
/// [`request_from_bytes`]), keyed under a fixed rule set that covers every
/// key part, every `on_missing_key` mode and every `distinct_of` source,
/// with the request helpers and decoders on its parts; then the whole
/// [`Limiter::check`](ratelimit_core::Limiter::check) (in-memory backend,
/// [`ManualClock`](ratelimit_core::ManualClock)) on it.
///
/// After the request, the input holds a probe name (a length-prefixed
/// chunk), one byte choosing the group of rules the limiter runs, two bytes
/// of milliseconds to advance between checks and two bytes of the upstream
/// status.
pub fn request_keys(data: &[u8]) {
    let (req, rest) = request_from_bytes(data);
    let mut rest = Input::new(rest);
    let probe = rest.string();

    // The decoders and helpers, through the public API (the percent
    // decoders themselves have their own property tests in the core).
    let normal = ratelimit_core::normalize_path(req.path.as_bytes());
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
    super::nginx_config::normalize(&req);

    let groups = rule_groups();
    for set in groups {
        for rule in set.rules() {
            for jwt_off in [false, true] {
                let got = backend::subject(rule, &req, &HashKey::DEFAULT, jwt_off);
                let again = backend::subject(rule, &req, &HashKey::DEFAULT, jwt_off);
                assert_eq!(got, again);
                if let KeyOutcome::Subject(d) = got {
                    let _ = d.to_hex();
                }
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
}
