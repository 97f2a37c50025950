//! Properties of the rule expressions: parsing never panics, errors point
//! inside the input, and well-formed expressions evaluate consistently.

use std::net::{IpAddr, Ipv4Addr};

use proptest::prelude::*;
use ratelimit_core::{Expression, RequestAttrs};

/// Tokens of the language, plus near-misses the lexer must refuse.
const TOKENS: &[&str] = &[
    "http.request.uri.path",
    "http.request.uri.query",
    "http.request.method",
    "http.host",
    "http.user_agent",
    "http.cookie",
    "http.request.headers",
    "http.request.jwt.claims",
    "app",
    "app.plan",
    "0",
    "ip.src",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    "\"x\"",
    "\"\"",
    "\"a\\\"b\"",
    "\"(a\"",
    "\"[\"",
    "eq",
    "ne",
    "==",
    "!=",
    "in",
    "contains",
    "matches",
    "starts_with",
    "ends_with",
    "lower",
    "and",
    "or",
    "not",
    "&&",
    "||",
    "!",
    "true",
    "false",
    "10.0.0.0/8",
    "2001:db8::/32",
    "192.0.2.1",
    "::ffff:1.2.3.4",
    "999.1.1.1/99",
    "\"",
    "\\",
    "=",
    "&",
    "|",
    "é",
    "\u{0}",
];

fn token_soup() -> impl Strategy<Value = String> {
    let piece = (prop::sample::select(TOKENS), prop::bool::ANY).prop_map(|(t, space)| {
        if space {
            format!("{t} ")
        } else {
            t.to_owned()
        }
    });
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn request() -> impl Strategy<Value = RequestAttrs> {
    (
        any::<[u8; 4]>(),
        "[a-zA-Z/.]{0,8}",
        "[A-Za-z]{0,6}",
        any::<Vec<u8>>(),
        prop::option::of("[a-z]{0,3}"),
        prop::option::of("[a-z]{0,3}"),
    )
        .prop_map(|(ip, path, host, ua, plan, tenant)| {
            let mut r = RequestAttrs::new(IpAddr::V4(Ipv4Addr::from(ip)))
                .with_path(path)
                .with_host(host)
                .with_header("user-agent", ua);
            if let Some(plan) = plan {
                r = r.with_jwt_claims([("plan".to_owned(), plan)].into());
            }
            if let Some(tenant) = tenant {
                r = r.with_app_value("tenant", tenant);
            }
            r
        })
}

/// Parses `src`, and if it parses, evaluates it; an error must point inside
/// the input or one past its end.
fn parse_and_run(src: &str, req: &RequestAttrs) -> Result<(), TestCaseError> {
    match Expression::parse(src) {
        Ok(expr) => {
            let _ = expr.matches(req);
        }
        Err(err) => {
            let chars = src.chars().count();
            prop_assert!(
                err.column() >= 1 && err.column() <= chars + 1,
                "{err} for {src:?}"
            );
            prop_assert!(!err.message().is_empty());
        }
    }
    Ok(())
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Well-formed conditions over a small alphabet.
fn condition() -> impl Strategy<Value = String> {
    let field = prop::sample::select(vec![
        "http.request.uri.path",
        "http.host",
        "http.user_agent",
        "lower(http.host)",
        "http.request.headers[\"User-Agent\"]",
        "http.request.jwt.claims[\"plan\"][0]",
        "app.tenant",
        "app[\"tenant\"]",
    ]);
    let value = "[a-zA-Z/.\"\\\\]{0,3}";
    let leaf = prop_oneof![
        (
            field.clone(),
            prop::sample::select(vec!["eq", "ne", "==", "!=", "contains"]),
            value
        )
            .prop_map(|(f, op, v)| format!("{f} {op} {}", quoted(&v))),
        (field.clone(), prop::collection::vec(value, 1..4)).prop_map(|(f, vs)| {
            let items: Vec<String> = vs.iter().map(|v| quoted(v)).collect();
            format!("{f} in {{ {} }}", items.join(", "))
        }),
        (
            prop::sample::select(vec!["starts_with", "ends_with"]),
            field,
            value
        )
            .prop_map(|(func, f, v)| format!("{func}({f}, {})", quoted(&v))),
        (any::<[u8; 4]>(), 0u8..=32)
            .prop_map(|(ip, p)| format!("ip.src in {{ {}/{p} }}", Ipv4Addr::from(ip))),
        prop::sample::select(vec!["true", "false"]).prop_map(str::to_owned),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) and ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) || ({b})")),
            inner.prop_map(|a| format!("not ({a})")),
        ]
    })
}

proptest! {
    #[test]
    fn parse_never_panics_on_arbitrary_strings(src in any::<String>(), req in request()) {
        parse_and_run(&src, &req)?;
    }

    #[test]
    fn parse_never_panics_on_token_soups(src in token_soup(), req in request()) {
        parse_and_run(&src, &req)?;
    }

    #[test]
    fn well_formed_conditions_parse_and_not_negates(src in condition(), req in request()) {
        let expr = Expression::parse(&src).map_err(|e| TestCaseError::fail(format!("{e} in {src:?}")))?;
        let negated = Expression::parse(&format!("not ({src})")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(negated.matches(&req), !expr.matches(&req));
        let or_true = Expression::parse(&format!("{src} or true")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(or_true.matches(&req));
    }

    #[test]
    fn ipv4_cidr_membership_matches_masking(addr in any::<u32>(), net in any::<u32>(), prefix in 0u32..=32) {
        let expr = Expression::parse(&format!("ip.src in {{ {}/{prefix} }}", Ipv4Addr::from(net)))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
        let req = RequestAttrs::new(IpAddr::V4(Ipv4Addr::from(addr)));
        prop_assert_eq!(expr.matches(&req), addr & mask == net & mask);
    }

    #[test]
    fn ipv6_cidr_membership_matches_masking(addr in any::<u128>(), net in any::<u128>(), prefix in 0u32..=128) {
        let net_ip = std::net::Ipv6Addr::from(net);
        let expr = Expression::parse(&format!("ip.src in {{ {net_ip}/{prefix} }}"))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
        let req = RequestAttrs::new(IpAddr::V6(std::net::Ipv6Addr::from(addr)));
        // Mapped addresses canonicalize to IPv4; leave them to the unit tests.
        prop_assume!(net_ip.to_ipv4_mapped().is_none() && req.client_ip.to_canonical().is_ipv6());
        prop_assert_eq!(expr.matches(&req), addr & mask == net & mask);
    }
}
