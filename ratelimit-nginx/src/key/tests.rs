//! Key templates: every variable rendered, credential headers and unknown
//! variables refused.

use super::*;

fn req() -> RequestAttrs {
    RequestAttrs::new("203.0.113.9".parse().expect("ip"))
        .with_host("Shop.Example.com:8443")
        .with_method("POST")
        .with_path("/a/../Wp-Login.php")
        .with_header("X-Tenant", "acme")
        .with_header("X-Tenant", "other")
}

#[test]
fn every_variable_renders_from_the_request() {
    let key =
        KeyTemplate::parse("$client_ip|$remote_addr|$host|$method|$path|$http_x_tenant|${site}x")
            .expect("valid");
    assert_eq!(
        String::from_utf8_lossy(&key.render(&req().with_app_value("site", "shop"))),
        "203.0.113.9|203.0.113.9|shop.example.com|POST|/Wp-Login.php|acme|shopx"
    );
}

#[test]
fn binary_remote_addr_is_the_client_ip() {
    let a = KeyTemplate::parse("$binary_remote_addr").expect("valid");
    let b = KeyTemplate::parse("$client_ip").expect("valid");
    assert_eq!(a, b);
    assert_eq!(a.render(&req()), b.render(&req()));
}

#[test]
fn a_missing_header_renders_empty_and_literal_text_keeps_the_key() {
    assert!(KeyTemplate::parse("$http_x_missing")
        .expect("valid")
        .render(&req())
        .is_empty());
    assert_eq!(
        KeyTemplate::parse("t:$http_x_missing")
            .expect("valid")
            .render(&req()),
        b"t:"
    );
}

#[test]
fn credential_headers_are_refused_in_a_key() {
    for name in [
        "cookie",
        "authorization",
        "proxy_authorization",
        "x_api_key",
        "X_Auth_Token",
    ] {
        let err = KeyTemplate::parse(&format!("$http_{name}")).expect_err(name);
        assert_eq!(err.kind(), &ConfigErrorKind::CredentialInKey, "{name}");
    }
    let err =
        KeyTemplate::parse_with_redact("$http_x_session", &["X-Session"]).expect_err("redacted");
    assert_eq!(err.kind(), &ConfigErrorKind::CredentialInKey);
    assert!(KeyTemplate::parse("$http_x_session").is_ok());
}

#[test]
fn unknown_or_malformed_variables_are_refused() {
    for bad in ["$", "$nope", "${client_ip", "$http_", "a$-b", "$cookie_sid"] {
        let err = KeyTemplate::parse(bad).expect_err(bad);
        assert_eq!(err.kind(), &ConfigErrorKind::UnknownVariable, "{bad}");
    }
}
