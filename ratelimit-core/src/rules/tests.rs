use super::*;

const NOW: u64 = 1_767_225_600_000;

fn load(rules: &str) -> Result<RuleSet, RuleError> {
    RuleSet::from_json_at(rules, NOW)
}

fn one(extra: &str) -> Result<RuleSet, RuleError> {
    load(&format!(
        r#"[{{"id": "r1", "expression": "true", "key": ["ip"], {extra}}}]"#
    ))
}

fn refused(extra: &str, field: &str) {
    let e = one(extra).expect_err(extra);
    assert_eq!(
        (e.rule(), e.field()),
        (Some("r1"), Some(field)),
        "{extra}: {e}"
    );
}

const FW: &str = r#""algorithm": "fixed_window", "limit": 5, "period": "1m""#;

#[test]
fn valid_rule_loads_with_defaults() {
    let s = one(FW).unwrap();
    let r = &s.rules()[0];
    assert_eq!((r.limit, r.period_ms, r.cost), (5, 60_000, 1));
    assert_eq!(r.on_missing_key, OnMissingKey::FallbackIp);
    assert_eq!((r.action, r.fail_mode), (Action::Block, FailMode::Open));
    assert!(r.is_site_wide());
}

#[test]
fn ranges_are_enforced_with_rule_and_field() {
    refused(
        r#""algorithm": "fixed_window", "limit": 0, "period": "1m""#,
        "limit",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 1000000001, "period": "1m""#,
        "limit",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5, "period": "25h""#,
        "period",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5, "period": "0s""#,
        "period",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5, "period": "1m", "penalty": "2d""#,
        "penalty",
    );
    refused(
        r#""algorithm": "distinct", "distinct_of": "path", "limit": 1001, "period": "1m""#,
        "limit",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5.5, "period": "1m""#,
        "limit",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": "5", "period": "1m""#,
        "limit",
    );
}

#[test]
fn fields_required_or_forbidden_per_algorithm() {
    refused(
        r#""algorithm": "token_bucket", "limit": 5, "period": "1m""#,
        "burst",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5, "period": "1m", "burst": 3"#,
        "burst",
    );
    refused(
        r#""algorithm": "distinct", "limit": 5, "period": "1m""#,
        "distinct_of",
    );
    refused(
        r#""algorithm": "fixed_window", "limit": 5, "period": "1m", "distinct_of": "path""#,
        "distinct_of",
    );
    refused(
        r#""algorithm": "distinct", "distinct_of": "path", "limit": 5, "period": "1m", "fail_mode": "local""#,
        "fail_mode",
    );
    refused(
        r#""algorithm": "distinct", "distinct_of": "path", "limit": 5, "period": "1m", "count_statuses": ["404"]"#,
        "count_statuses",
    );
    refused(
        r#""algorithm": "distinct", "distinct_of": "cookie:x", "limit": 5, "period": "1m""#,
        "distinct_of",
    );
    refused(r#""limit": 5, "period": "1m""#, "algorithm");
    refused(r#""algorithm": "fixed_window", "period": "1m""#, "limit");
    refused(r#""algorithm": "fixed_window", "limit": 5"#, "period");
    refused(
        r#""algorithm": "leaky_bucket", "limit": 5, "period": "1m", "burst": 0"#,
        "burst",
    );
    refused(
        r#""algorithm": "leaky_bucket", "limit": 5, "period": "1m", "burst": 2, "cost": 3"#,
        "cost",
    );
}

#[test]
fn count_statuses_refuses_5xx() {
    refused(
        &format!(r#"{FW}, "count_statuses": ["5xx"]"#),
        "count_statuses",
    );
    refused(
        &format!(r#"{FW}, "count_statuses": ["503"]"#),
        "count_statuses",
    );
    refused(&format!(r#"{FW}, "count_statuses": []"#), "count_statuses");
    assert!(one(&format!(r#"{FW}, "count_statuses": ["404", "4xx"]"#)).is_ok());
}

#[test]
fn unknown_fields_and_bad_enums_are_named() {
    refused(&format!(r#"{FW}, "limits": 5"#), "limits");
    refused(&format!(r#"{FW}, "action": "deny""#), "action");
    refused(
        &format!(r#"{FW}, "on_missing_key": "ignore""#),
        "on_missing_key",
    );
    refused(&format!(r#"{FW}, "expires_at": "tomorrow""#), "expires_at");
    refused(
        &format!(r#"{FW}, "ratelimit_headers": "yes""#),
        "ratelimit_headers",
    );
}

#[test]
fn key_parts_and_combinations() {
    let with_key = |k: &str| {
        load(&format!(
            r#"[{{"id": "r1", "expression": "http.request.uri.path eq \"/a\"", "key": {k}, {FW}}}]"#
        ))
    };
    assert!(with_key(r#"["ip", "header:x-tenant"]"#).is_ok());
    assert!(with_key(r#"["jwt_claim:sub", "cookie:sid"]"#).is_ok());
    for bad in [
        r#"[]"#,
        r#"["ip","host","method","country","locale","asnum"]"#,
        r#"["constant", "ip"]"#,
        r#"["ip", "ip"]"#,
        r#"["user"]"#,
        r#"["header:"]"#,
    ] {
        let e = with_key(bad).expect_err(bad);
        assert_eq!((e.rule(), e.field()), (Some("r1"), Some("key")), "{bad}");
    }
    for lone in [
        r#"["header:x"]"#,
        r#"["cookie:x"]"#,
        r#"["query:x"]"#,
        r#"["host"]"#,
        r#"["method"]"#,
        r#"["ja4"]"#,
    ] {
        let e = with_key(lone).expect_err(lone);
        assert_eq!(e.field(), Some("key"), "{lone}");
    }
    assert!(with_key(r#"["country"]"#).is_ok());
}

#[test]
fn site_wide_ip_rule_is_a_partner_but_not_distinct_or_count() {
    let ip = r#"{"id": "ip", "expression": "true", "key": ["ip"], "algorithm": "fixed_window", "limit": 50, "period": "1m"}"#;
    let tenant = r#"{"id": "t", "expression": "http.request.uri.path eq \"/a\"", "key": ["header:x-tenant"], "algorithm": "fixed_window", "limit": 5, "period": "1m"}"#;
    assert!(load(&format!("[{tenant}, {ip}]")).is_ok());
    let distinct_ip = r#"{"id": "ip", "expression": "true", "key": ["ip"], "algorithm": "distinct", "distinct_of": "path", "limit": 50, "period": "1m"}"#;
    assert_eq!(
        load(&format!("[{tenant}, {distinct_ip}]"))
            .unwrap_err()
            .rule(),
        Some("t")
    );
    let count_ip = r#"{"id": "ip", "expression": "true", "key": ["ip"], "algorithm": "fixed_window", "limit": 50, "period": "1m", "count_statuses": ["404"]}"#;
    assert_eq!(
        load(&format!("[{tenant}, {count_ip}]")).unwrap_err().rule(),
        Some("t")
    );
}

#[test]
fn at_most_two_site_wide_rules_and_unique_ids() {
    let r = |id: &str| format!(r#"{{"id": "{id}", "expression": "true", "key": ["ip"], {FW}}}"#);
    assert!(load(&format!("[{}, {}]", r("a"), r("b"))).is_ok());
    let e = load(&format!("[{}, {}, {}]", r("a"), r("b"), r("c"))).unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("c"), Some("expression")));
    let e = load(&format!("[{}, {}]", r("a"), r("a"))).unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("a"), Some("id")));
}

#[test]
fn warnings_are_returned_not_printed() {
    let s = one(&format!(r#"{FW}, "count_statuses": ["404"], "fail_mode": "closed", "expires_at": "2025-01-01T00:00:00Z""#)).unwrap();
    let fields: Vec<&str> = s.warnings().iter().map(|w| w.field.as_str()).collect();
    assert_eq!(fields, ["fail_mode", "expires_at"]);
}

#[test]
fn bad_ids_and_bad_json_are_refused() {
    let e = load(r#"[{"id": "a b", "expression": "true", "key": ["ip"], "algorithm": "fixed_window", "limit": 5, "period": "1m"}]"#).unwrap_err();
    assert_eq!(e.field(), Some("id"));
    let e = load(r#"[{"expression": "true"}]"#).unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("#0"), Some("id")));
    assert!(load("{").is_err());
    assert!(load(r#"{"rules": 5}"#).is_err());
    assert!(load(r#"{"rules": []}"#).is_ok());
}

#[test]
fn builder_validates_like_json() {
    let e = RuleBuilder::new("b")
        .fixed_window(0, std::time::Duration::from_secs(60))
        .key(["ip"])
        .build()
        .unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("b"), Some("limit")));
    let e = RuleBuilder::new("b")
        .fixed_window(5, std::time::Duration::from_millis(1500))
        .key(["ip"])
        .build()
        .unwrap_err();
    assert_eq!(e.field(), Some("period"));
}

#[test]
fn expiry_past_year_9999_is_refused_so_exports_load() {
    let e = RuleBuilder::new("r1")
        .fixed_window(5, std::time::Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(u64::MAX)
        .build()
        .unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("r1"), Some("expires_at")));
    refused(
        &format!(r#"{FW}, "expires_at": "9999-12-31T23:59:59-01:00""#),
        "expires_at",
    );
}

#[test]
fn charge_is_request_by_default_and_response_refuses_what_it_cannot_mean() {
    assert_eq!(one(FW).unwrap().rules()[0].charge, Charge::Request);
    let r = one(&format!(r#"{FW}, "charge": "response""#)).unwrap();
    assert!(r.rules()[0].charges_response());
    assert!(one(&format!(r#"{FW}, "charge": "request", "cost": 2"#)).is_ok());
    refused(&format!(r#"{FW}, "charge": "later""#), "charge");
    refused(&format!(r#"{FW}, "charge": 1"#), "charge");
    refused(
        &format!(r#"{FW}, "charge": "response", "cost": 1"#),
        "charge",
    );
    refused(
        &format!(r#"{FW}, "charge": "response", "count_statuses": ["404"]"#),
        "charge",
    );
    refused(
        r#""algorithm": "distinct", "distinct_of": "path", "limit": 5, "period": "1m", "charge": "response""#,
        "charge",
    );
    let built = RuleBuilder::new("r1")
        .fixed_window(5, std::time::Duration::from_secs(60))
        .key(["ip"])
        .charge(Charge::Response)
        .cost(2)
        .build()
        .unwrap_err();
    assert_eq!((built.rule(), built.field()), (Some("r1"), Some("charge")));
}

#[test]
fn a_response_rule_does_not_partner_client_chosen_keys() {
    let partner = r#"{"id": "ip", "expression": "true", "key": ["ip"], "algorithm": "fixed_window", "limit": 50, "period": "1m", "charge": "response"}"#;
    let tenant = r#"{"id": "t", "expression": "false", "key": ["header:x-tenant"], "algorithm": "fixed_window", "limit": 5, "period": "1m"}"#;
    let e = load(&format!("[{partner}, {tenant}]")).unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("t"), Some("key")));
}

/// Issue 27, item 10: what `main` prints for an error returned with `?`
/// (`Error: {:?}`) reads like `Display`, with a suggestion for the slips a
/// new user makes.
#[test]
fn errors_through_question_mark_read_as_sentences_with_a_suggestion() {
    let e = one(&format!(r#"{FW}, "ratelimit_header": true"#)).unwrap_err();
    let want =
        r#"rule "r1", field "ratelimit_header": unknown field: did you mean "ratelimit_headers"?"#;
    assert_eq!(e.to_string(), want);
    assert_eq!(format!("{e:?}"), want);
    assert_eq!(
        e.message(),
        r#"unknown field: did you mean "ratelimit_headers"?"#
    );
    let e = one(r#""algorithm": "fixed_window", "limit": 5, "period": "1 minute""#).unwrap_err();
    assert_eq!(
        format!("{e:?}"),
        r#"rule "r1", field "period": "1 minute" is not a duration: use "1m" (units s, m, h, d, without spaces)"#
    );
    let e = one(&format!(r#"{FW}, "penalty": "5 mins""#)).unwrap_err();
    assert!(
        e.to_string()
            .ends_with(r#"use "5m" (units s, m, h, d, without spaces)"#),
        "{e}"
    );
    let e = one(r#""algorithm": "sliding-window", "limit": 5, "period": "1m""#).unwrap_err();
    assert_eq!(
        e.message(),
        r#""sliding-window" is not one of fixed_window, sliding_window, token_bucket, leaky_bucket, distinct: did you mean "sliding_window"?"#
    );
    let e = one(&format!(r#"{FW}, "fail_mode": "opne""#)).unwrap_err();
    assert!(e.message().ends_with(r#"did you mean "open"?"#), "{e}");
    let e = one(&format!(r#"{FW}, "colour": 1"#)).unwrap_err();
    assert_eq!(
        format!("{e:?}"),
        r#"rule "r1", field "colour": unknown field"#
    );
    // The structured form is still there.
    let pretty = format!("{e:#?}");
    assert!(pretty.starts_with("RuleError {"), "{pretty}");
    assert!(
        pretty.contains(
            r#"field: Some(
        "colour",
    ),"#
        ),
        "{pretty}"
    );
}

#[test]
fn the_suggested_field_names_are_the_schemas() {
    let schema = RuleSet::json_schema();
    let mut documented: Vec<&str> = schema["$defs"]["rule"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut read = raw::FIELDS.to_vec();
    documented.sort_unstable();
    read.sort_unstable();
    assert_eq!(read, documented);
}
