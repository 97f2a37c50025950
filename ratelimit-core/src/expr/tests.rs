//! The language, tested through the public API: fields, operators, logic,
//! functions, and where errors point.

use super::*;

fn req() -> RequestAttrs {
    RequestAttrs::new("192.0.2.1".parse().unwrap())
        .with_method("POST")
        .with_host("api.example.com")
        .with_path("/v1/login")
        .with_query("a=1&b=%20")
        .with_header("User-Agent", "curl/8.0")
        .with_header("User-Agent", "second")
        .with_header("Cookie", "sid=abc")
        .with_header("Cookie", "theme=dark")
        .with_header("X-Api-Key", "k1")
        .with_header("x-api-key", "k2")
}

fn holds(src: &str, r: &RequestAttrs) -> bool {
    Expression::parse(src)
        .unwrap_or_else(|e| panic!("{src:?}: {e}"))
        .matches(r)
}

fn check(src: &str) -> bool {
    holds(src, &req())
}

fn error(src: &str) -> (usize, String) {
    let err = Expression::parse(src).expect_err(src);
    (err.column(), err.message().to_owned())
}

#[test]
fn every_string_field_reads_its_part_of_the_request() {
    assert!(check(r#"http.request.uri.path eq "/v1/login""#));
    assert!(check(r#"http.request.uri.query eq "a=1&b=%20""#));
    assert!(check(r#"http.request.method eq "POST""#));
    assert!(check(r#"http.host eq "api.example.com""#));
    assert!(check(r#"http.user_agent eq "curl/8.0""#));
    assert!(check(r#"http.cookie eq "sid=abc; theme=dark""#));
    assert!(check(r#"http.request.headers["x-api-key"] eq "k1""#));
}

#[test]
fn header_names_are_case_insensitive_and_first_value_wins() {
    assert!(check(r#"http.request.headers["X-API-KEY"] eq "k1""#));
    assert!(check(r#"http.request.headers["user-agent"] == "curl/8.0""#));
}

#[test]
fn missing_headers_compare_as_the_empty_string() {
    let bare = RequestAttrs::new("192.0.2.1".parse().unwrap());
    assert!(holds(r#"http.request.headers["x-none"] eq """#, &bare));
    assert!(holds(r#"http.request.headers["x-none"] ne "x""#, &bare));
    assert!(holds(
        r#"http.user_agent eq "" and http.cookie eq """#,
        &bare
    ));
}

#[test]
fn ip_src_compares_addresses_and_treats_mapped_v6_as_v4() {
    assert!(check("ip.src eq 192.0.2.1"));
    assert!(check(r#"ip.src == "192.0.2.1""#));
    assert!(check("ip.src eq ::ffff:192.0.2.1"));
    assert!(check("ip.src ne 192.0.2.2"));
    let mapped = RequestAttrs::new("::ffff:192.0.2.1".parse().unwrap());
    assert!(holds("ip.src eq 192.0.2.1", &mapped));
    assert!(holds("ip.src in { 192.0.2.0/24 }", &mapped));
}

#[test]
fn ip_src_in_checks_v4_and_v6_cidrs_bare_or_quoted() {
    let set = r#"ip.src in { 10.0.0.0/8, "192.0.2.0/30" 2001:db8::/32 }"#;
    assert!(check(set));
    let v6 = RequestAttrs::new("2001:db8:1::5".parse().unwrap());
    assert!(holds(set, &v6));
    let outside = RequestAttrs::new("2001:db9::1".parse().unwrap());
    assert!(!holds(set, &outside));
    assert!(!check("ip.src in { 192.0.2.4/30 }"));
}

#[test]
fn eq_ne_and_their_symbols_agree() {
    assert!(check(r#"http.request.method eq "POST""#));
    assert!(check(r#"http.request.method == "POST""#));
    assert!(!check(r#"http.request.method ne "POST""#));
    assert!(!check(r#"http.request.method != "POST""#));
    assert!(!check(r#"http.request.method eq "post""#));
}

#[test]
fn in_accepts_spaces_or_commas_between_strings() {
    assert!(check(r#"http.request.method in { "GET" "POST" }"#));
    assert!(check(r#"http.request.method in {"GET","POST",}"#));
    assert!(!check(r#"http.request.method in { "GET" "PUT" }"#));
}

#[test]
fn contains_and_matches_search_anywhere() {
    assert!(check(r#"http.request.uri.path contains "log""#));
    assert!(!check(r#"http.request.uri.path contains "LOG""#));
    assert!(check(r#"http.request.uri.path matches "^/v[0-9]+/""#));
    assert!(check(r#"http.host matches "example\\.com$""#));
    assert!(!check(r#"http.host matches "^example""#));
}

#[test]
fn functions_starts_with_ends_with_and_lower() {
    assert!(check(r#"starts_with(http.request.uri.path, "/v1/")"#));
    assert!(check(r#"ends_with(http.host, ".example.com")"#));
    assert!(!check(r#"starts_with(http.host, "example")"#));
    let upper = req().with_host("API.Example.COM");
    assert!(holds(r#"lower(http.host) eq "api.example.com""#, &upper));
    assert!(holds(
        r#"ends_with(lower(http.host), ".example.com")"#,
        &upper
    ));
    assert!(holds(
        r#"lower(lower(http.host)) in { "api.example.com" }"#,
        &upper
    ));
    assert!(!holds(r#"http.host eq "api.example.com""#, &upper));
}

#[test]
fn not_binds_tighter_than_and_which_binds_tighter_than_or() {
    assert!(check("true or false and false"));
    assert!(!check("(true or false) and false"));
    assert!(check("not false and true"));
    assert!(!check("not (false or true)"));
    assert!(check("!false && !false || false"));
    assert!(check("false and false or true"));
    assert!(check("not not true"));
}

#[test]
fn is_always_true_only_for_the_literal() {
    for src in ["true", "  true\n", "((true))"] {
        assert!(Expression::parse(src).unwrap().is_always_true(), "{src:?}");
    }
    for src in ["false", "not false", "true or true", r#"http.host ne "x""#] {
        assert!(!Expression::parse(src).unwrap().is_always_true(), "{src:?}");
    }
}

#[test]
fn source_display_and_from_str_keep_the_text() {
    let src = r#" http.host eq "a" "#;
    let expr: Expression = src.parse().unwrap();
    assert_eq!(expr.source(), src);
    assert_eq!(expr.to_string(), src);
}

#[test]
fn errors_point_at_the_column_of_the_problem() {
    let cases: &[(&str, usize, &str)] = &[
        ("http.host eq", 13, "expected a value after `eq`"),
        (r#"http.host eq "x"#, 14, "unterminated string"),
        (r#"http.hots eq "x""#, 1, "unknown field `http.hots`"),
        (r#"http.host "x""#, 11, "expected an operator"),
        (
            r#"http.host eq GET"#,
            14,
            "expected a string in double quotes after `eq`",
        ),
        (
            r#"http.host in { "a" "b""#,
            23,
            "missing `}` to close the set at column 14",
        ),
        (
            r#"(http.host eq "a""#,
            18,
            "missing `)` to close the `(` at column 1",
        ),
        (r#"http.host eq "a")"#, 17, "unexpected `)`"),
        (
            r#"http.host eq "a" "b""#,
            18,
            "expected `and`, `or` or the end",
        ),
        (
            "",
            1,
            "expected a condition, found the end of the expression",
        ),
        ("true and", 9, "expected a condition"),
        (r#"upper(http.host) eq "a""#, 1, "unknown function `upper`"),
        (
            r#"http.request.headers eq "a""#,
            22,
            "expected `[\"name\"]`",
        ),
        (
            r#"http.request.headers["a b"] eq "a""#,
            22,
            "invalid header name",
        ),
        ("ip.src eq 10.0.0.0/8", 11, "`eq` compares one address"),
        (
            "ip.src in { 10.0.0.0/33 }",
            13,
            "invalid IP address or network",
        ),
        ("ip.src eq 300.1.1.1", 11, "invalid IP address"),
        (
            r#"ip.src contains "1""#,
            8,
            "`contains` needs a string field",
        ),
        (r#"lower(ip.src) eq "a""#, 7, "`lower` needs a string field"),
        (r#"http.host in { }"#, 14, "empty set"),
        (
            r#"http.host eq "a" and eq"#,
            22,
            "expected a field, found `eq`",
        ),
        (r#"starts_with(http.host "a")"#, 23, "expected `,`"),
        (r#"http.host = "a""#, 11, "expected `==`"),
    ];
    for &(src, col, msg) in cases {
        let (got_col, got_msg) = error(src);
        assert!(got_msg.starts_with(msg), "{src:?}: {got_msg:?}");
        assert_eq!(got_col, col, "{src:?}: {got_msg}");
    }
}

#[test]
fn bad_regex_is_refused_at_the_column_of_the_pattern() {
    let (col, msg) = error(r#"http.host matches "(ab""#);
    assert_eq!(col, 19);
    assert!(msg.starts_with("invalid regular expression: "), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn long_or_huge_regex_is_refused() {
    let long = format!(r#"http.host matches "{}""#, "a".repeat(1001));
    assert_eq!(
        error(&long),
        (19, "regular expression longer than 1000 characters".into())
    );
    let huge = r#"http.host matches "\\w{1000}\\w{1000}""#;
    let (col, msg) = error(huge);
    assert_eq!(col, 19);
    assert!(
        msg.contains("too large") || msg.contains("invalid"),
        "{msg}"
    );
    assert!(Expression::parse(&format!(r#"http.host matches "{}""#, "a".repeat(1000))).is_ok());
}

#[test]
fn nesting_deeper_than_64_levels_is_refused() {
    let ok = format!("{}true{}", "(".repeat(64), ")".repeat(64));
    assert!(Expression::parse(&ok).is_ok());
    let deep = format!("{}true{}", "(".repeat(65), ")".repeat(65));
    assert_eq!(error(&deep), (65, "nesting deeper than 64 levels".into()));
    let nots = format!("{}true", "not ".repeat(65));
    assert_eq!(error(&nots).0, 257);
    let lowers = format!(
        "{}http.host{} eq \"a\"",
        "lower(".repeat(65),
        ")".repeat(65)
    );
    assert_eq!(error(&lowers).0, 385);
}

#[test]
fn a_hostile_flood_of_parentheses_errors_without_overflowing() {
    let flood = "(".repeat(16 * 1024);
    assert!(error(&flood).1.starts_with("nesting deeper"));
    let bangs = "!".repeat(16 * 1024);
    assert!(error(&bangs).1.starts_with("nesting deeper"));
}

#[test]
fn long_and_chains_stay_flat() {
    let chain = vec!["true"; 1800].join(" and ");
    let expr = Expression::parse(&chain).unwrap();
    assert!(expr.matches(&req()));
    assert!(!expr.is_always_true());
}

#[test]
fn input_over_16_kib_is_refused() {
    let src = format!("true{}", " ".repeat(16 * 1024));
    let (col, msg) = error(&src);
    assert_eq!(col, 16 * 1024 + 1);
    assert_eq!(msg, "expression longer than 16384 bytes");
    assert!(Expression::parse(&format!("true{}", " ".repeat(16 * 1024 - 4))).is_ok());
}

#[test]
fn expressions_are_shareable_across_threads() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<Expression>();
    send_sync::<ExprError>();
}
