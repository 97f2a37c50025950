//! Issue 41: every error a new user meets carries its fix. One test per
//! message: a slip in an expression field, a string in single quotes, an
//! unknown key part, a rule with several errors, `gcra`.

use ratelimit_core::rules::{RuleError, RuleSet};
use ratelimit_core::Expression;

/// A rule with `fields` after its id, loaded alone.
fn load(fields: &str) -> Result<RuleSet, RuleError> {
    RuleSet::from_json(&format!(r#"[{{"id": "login", {fields}}}]"#))
}

/// The fields of a valid fixed-window rule but its expression.
const REST: &str = r#""algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]"#;

#[test]
fn a_slip_in_an_expression_field_names_the_field_meant() {
    let e = Expression::parse(r#"http.request.uri.pth eq "/login""#).unwrap_err();
    assert_eq!(e.column(), 1);
    assert_eq!(
        e.message(),
        "unknown field `http.request.uri.pth`: did you mean `http.request.uri.path`?"
    );
    let e = Expression::parse(r#"http.hots eq "a" or ip.scr eq 10.0.0.1"#).unwrap_err();
    assert!(e.message().ends_with("did you mean `http.host`?"), "{e}");
    // Through a rule file, the rule and the field are named too.
    let e = load(&format!(
        r#""expression": "http.request.metod eq \"POST\"", {REST}"#
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "rule \"login\", field \"expression\": column 1: unknown field \
         `http.request.metod`: did you mean `http.request.method`?"
    );
}

#[test]
fn a_word_far_from_every_field_lists_the_fields() {
    let e = Expression::parse(r#"path eq "/login""#).unwrap_err();
    assert!(
        e.message()
            .starts_with("unknown field `path`; the fields are `http.request.uri.path`, "),
        "{e}"
    );
    assert!(e.message().contains("`ip.src`"), "{e}");
}

#[test]
fn a_string_in_single_quotes_is_shown_with_double_quotes() {
    let e = Expression::parse("http.request.uri.path eq '/login'").unwrap_err();
    assert_eq!(e.column(), 26);
    assert_eq!(
        e.message(),
        r#"strings take double quotes, not `'`: write `"/login"`"#
    );
    // No closing quote: the rule of the language, without a rewrite.
    let e = Expression::parse("http.host eq 'a").unwrap_err();
    assert_eq!(e.message(), "strings take double quotes, not `'`");
}

#[test]
fn an_unknown_key_part_lists_the_parts_and_the_one_meant() {
    let e = load(r#""expression": "true", "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["client_ip"]"#)
        .unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("login"), Some("key")));
    assert_eq!(
        e.message(),
        "unknown key part \"client_ip\": did you mean \"ip\"? The parts are ip, host, method, \
         country, asnum, ja4, locale, constant, header:<name>, cookie:<name>, query:<name>, \
         jwt_claim:<name>, app:<name>"
    );
    let e = load(r#""expression": "true", "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip", "header.x-tenant"]"#)
        .unwrap_err();
    assert!(
        e.message()
            .starts_with(r#"unknown key part "header.x-tenant": did you mean "header:x-tenant"?"#),
        "{e}"
    );
    let e = load(r#""expression": "true", "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["user"]"#)
        .unwrap_err();
    assert!(
        e.message()
            .starts_with(r#"unknown key part "user"; the parts are ip, host,"#),
        "{e}"
    );
}

#[test]
fn every_error_of_a_rule_is_reported() {
    let e = load(
        r#""expression": "http.request.uri.path eq '/login'", "algorithm": "fixed_window",
        "limit": 0, "period": "1 minute", "key": ["ip"], "penalty": "0s""#,
    )
    .unwrap_err();
    let all: Vec<(Option<&str>, Option<&str>)> = std::iter::once(&e)
        .chain(e.others())
        .map(|e| (e.rule(), e.field()))
        .collect();
    // The field read badly from the JSON first, then validation's order.
    assert_eq!(
        all,
        [
            (Some("login"), Some("period")),
            (Some("login"), Some("expression")),
            (Some("login"), Some("limit")),
            (Some("login"), Some("penalty")),
        ]
    );
    let shown = e.to_string();
    assert_eq!(shown.lines().count(), 4, "{shown}");
    assert!(
        shown
            .lines()
            .all(|l| l.starts_with("rule \"login\", field ")),
        "{shown}"
    );
    // `{:?}` (what `main` prints) is the same text.
    assert_eq!(format!("{e:?}"), shown);
}

#[test]
fn every_rule_with_an_error_is_reported() {
    let e = RuleSet::from_json(
        r#"[{"id": "a", "expression": "true", "algorithm": "fixed_window", "limit": 5,
             "period": "1m", "key": ["ip"], "colour": 1},
            {"id": "ok", "expression": "true", "algorithm": "fixed_window", "limit": 5,
             "period": "1m", "key": ["ip"]},
            {"id": "b", "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]}]"#,
    )
    .unwrap_err();
    let all: Vec<(Option<&str>, Option<&str>)> = std::iter::once(&e)
        .chain(e.others())
        .map(|e| (e.rule(), e.field()))
        .collect();
    assert_eq!(
        all,
        [(Some("a"), Some("colour")), (Some("b"), Some("expression"))]
    );
    assert!(e.others().iter().all(|o| o.others().is_empty()));
}

#[test]
fn a_missing_algorithm_hides_only_the_checks_that_need_it() {
    // Without an algorithm the limit's range and the burst cannot be
    // judged; the period and the key still are.
    let e = load(r#""expression": "true", "limit": 5, "period": "90000s", "key": []"#).unwrap_err();
    let fields: Vec<Option<&str>> = std::iter::once(&e)
        .chain(e.others())
        .map(RuleError::field)
        .collect();
    assert_eq!(fields, [Some("algorithm"), Some("period"), Some("key")]);
}

#[test]
fn gcra_points_at_leaky_bucket() {
    let e = load(r#""expression": "true", "algorithm": "gcra", "limit": 5, "period": "1m", "burst": 5, "key": ["ip"]"#)
        .unwrap_err();
    assert_eq!((e.rule(), e.field()), (Some("login"), Some("algorithm")));
    assert_eq!(
        e.message(),
        "\"gcra\" is not one of fixed_window, sliding_window, token_bucket, leaky_bucket, \
         distinct: GCRA (governor's algorithm) is \"leaky_bucket\" here, with burst as \
         governor's burst size"
    );
    // The rule as the message says loads.
    load(r#""expression": "true", "algorithm": "leaky_bucket", "limit": 5, "period": "1m", "burst": 5, "key": ["ip"]"#)
        .unwrap();
}
