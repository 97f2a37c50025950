//! Issue 27, item 10: `main` prints an error returned with `?` as `{:?}`
//! (`Error: {err:?}`), so every error type a user gets through `?` shows
//! its `Display` form there; `{:#?}` keeps the structured form.

use std::time::Duration;

use ratelimit_core::backend::{BackendError, BackendErrorKind};
use ratelimit_core::keyed::KeyedError;
use ratelimit_core::limiter::AdminError;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Cidr, Expression};

/// `{:?}` is `Display`, and `{:#?}` starts with `pretty`.
fn reads_as_display<E: std::error::Error>(e: &E, pretty: &str) {
    assert_eq!(format!("{e:?}"), e.to_string());
    let alternate = format!("{e:#?}");
    assert!(alternate.starts_with(pretty), "{alternate}");
}

#[test]
fn rule_errors_read_as_display() {
    let e = RuleSet::from_json(
        r#"[{"id": "login", "expression": "true",
        "algorithm": "fixed_window", "limit": 5, "period": "1 minute", "key": ["ip"]}]"#,
    )
    .unwrap_err();
    assert_eq!(
        format!("{e:?}"),
        r#"rule "login", field "period": "1 minute" is not a duration: use "1m" (units s, m, h, d, without spaces)"#
    );
    reads_as_display(&e, "RuleError {\n    rule: Some(");
    let e = RuleSet::from_json("[1").unwrap_err();
    assert!(format!("{e:?}").starts_with("invalid JSON: "), "{e:?}");
}

#[test]
fn expression_and_cidr_errors_read_as_display() {
    let e = Expression::parse("http.host eq").unwrap_err();
    assert_eq!(format!("{e:?}"), "column 13: expected a value after `eq`");
    reads_as_display(&e, "ExprError {\n    column: 13,");
    let e = "10.0.0.0/33".parse::<Cidr>().unwrap_err();
    assert_eq!(
        format!("{e:?}"),
        "invalid address range, expected such as 10.0.0.0/8"
    );
}

#[test]
fn backend_keyed_and_admin_errors_read_as_display() {
    let b = BackendError::new(BackendErrorKind::Timeout, "node 10.0.0.1:6379");
    assert_eq!(format!("{b:?}"), "timed out: node 10.0.0.1:6379");
    reads_as_display(&b, "BackendError {\n    kind: Timeout,");
    let cases = [
        (KeyedError::UnknownRule("api".into()), "UnknownRule(\n"),
        (
            KeyedError::InsufficientCapacity {
                cost: 5,
                capacity: 2,
            },
            "InsufficientCapacity {\n    cost: 5,",
        ),
        (
            KeyedError::WaitTooLong {
                wait: Duration::from_millis(1500),
                max_wait: Duration::from_secs(1),
            },
            "WaitTooLong {\n    wait: 1.5s,",
        ),
        (
            KeyedError::Backend(b.clone()),
            "Backend(\n    BackendError {",
        ),
    ];
    for (e, pretty) in &cases {
        reads_as_display(e, pretty);
    }
    assert_eq!(
        format!("{:?}", cases[2].0),
        "admission is 1500 ms away, past the wait of 1000 ms allowed"
    );
    reads_as_display(&AdminError::NoSubject, "NoSubject");
    reads_as_display(&AdminError::Backend(b), "Backend(\n    BackendError {");
}
