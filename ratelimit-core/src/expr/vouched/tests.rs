//! Vouched fields: claims and application values read only what was
//! verified or given, and a bad field fails the load naming the rule.

use std::collections::BTreeMap;

use crate::{Expression, RequestAttrs};

fn req() -> RequestAttrs {
    RequestAttrs::new("192.0.2.1".parse().unwrap())
}

fn pro() -> RequestAttrs {
    let claims = BTreeMap::from([("plan".to_owned(), "pro".to_owned())]);
    req()
        .with_jwt_claims(claims)
        .with_app_value("tenant", "Acme")
}

fn parse(src: &str) -> Expression {
    Expression::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn err(src: &str) -> String {
    Expression::parse(src).unwrap_err().to_string()
}

#[test]
fn claims_read_the_verified_claims_only() {
    for src in [
        r#"http.request.jwt.claims["plan"][0] eq "pro""#,
        r#"http.request.jwt.claims["plan"] eq "pro""#,
        r#"http.request.jwt.claims["plan"] in { "pro" "team" }"#,
        r#"lower(http.request.jwt.claims["plan"]) eq "pro""#,
    ] {
        let e = parse(src);
        assert!(e.matches(&pro()), "{src}");
        assert!(!e.matches(&req()), "{src}: no verified token");
        let spoofed = req()
            .with_header("plan", "pro")
            .with_app_value("plan", "pro");
        assert!(
            !e.matches(&spoofed),
            "{src}: not from headers or app values"
        );
    }
    let missing = parse(r#"http.request.jwt.claims["plan"] eq """#);
    assert!(
        missing.matches(&req()),
        "a missing claim is the empty string"
    );
}

#[test]
fn app_values_read_the_applications_values_only() {
    for src in [
        r#"app.tenant eq "Acme""#,
        r#"app["tenant"] eq "Acme""#,
        r#"starts_with(app.tenant, "Ac")"#,
        r#"app["tenant"] matches "^A""#,
    ] {
        let e = parse(src);
        assert!(e.matches(&pro()), "{src}");
        assert!(!e.matches(&req().with_header("tenant", "Acme")), "{src}");
    }
    let first = req().with_app_value("t", "one").with_app_value("t", "two");
    assert!(
        parse(r#"app.t eq "one""#).matches(&first),
        "the first counts"
    );
}

#[test]
fn a_rule_with_a_bad_field_fails_to_load_naming_the_rule_and_field() {
    let json = r#"[{"id": "pro", "expression": "http.request.jwt.claims[\"plan\"][2] eq \"pro\"",
            "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["jwt_claim:sub"]}]"#;
    let e = crate::rules::RuleSet::from_json(json)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pro") && e.contains("expression") && e.contains("[0]"),
        "{e}"
    );
}

#[test]
fn the_jwt_switch_hides_claims_from_expressions() {
    let e = parse(r#"http.request.jwt.claims["plan"] eq "pro""#);
    assert!(e.matches_with(&pro(), false));
    assert!(!e.matches_with(&pro(), true));
    assert!(parse(r#"app.tenant eq "Acme""#).matches_with(&pro(), true));
}

#[test]
fn bad_claims_and_app_fields_are_refused_at_load() {
    let cases = [
        (
            r#"http.request.jwt.claims eq "x""#,
            "column 25: expected `[\"name\"]` after `http.request.jwt.claims`, found `eq`",
        ),
        (
            r#"http.request.jwt.claims[""] eq "x""#,
            "column 25: empty claim name",
        ),
        (
            r#"http.request.jwt.claims["p"][1] eq "x""#,
            "column 30: only `[0]` may follow a claim (a claim holds one value), found `1`",
        ),
        (
            r#"http.request.jwt.claims["p"][0 eq "x""#,
            "column 32: expected `]` after the claim's index, found `eq`",
        ),
        (
            r#"http.request.jwt.claims["p" eq "x""#,
            "column 29: expected `]` after the claim name, found `eq`",
        ),
        (r#"app. eq "x""#, "column 1: empty application value name"),
        (
            r#"app eq "x""#,
            "column 5: expected `[\"name\"]` after `app`, found `eq`",
        ),
        (r#"app.t"#, ""),
    ];
    for (src, want) in cases {
        let got = err(src);
        if !want.is_empty() {
            assert_eq!(got, want, "{src}");
        }
    }
    assert_eq!(
        err("app[\"a\u{1}b\"] eq \"x\""),
        "column 5: invalid application value name `a\\u{1}b`"
    );
    let long = format!(r#"app.{} eq "x""#, "n".repeat(129));
    assert_eq!(
        err(&long),
        "column 1: application value name longer than 128 bytes"
    );
    assert!(Expression::parse(&format!(r#"app.{} eq "x""#, "n".repeat(128))).is_ok());
}
