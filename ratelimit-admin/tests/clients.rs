//! The clients a rule would hit, and the penalties in force, show the
//! client readably (the IP, the key's values) with credentials redacted;
//! the digest stays the identity a lift names.

mod support;

use ratelimit_admin::Admin;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use support::*;

const RULES: &str = r#"[
  {"id": "api.shadow", "expression": "http.request.uri.path eq \"/api\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1m",
   "key": ["ip", "header:authorization", "header:x-tenant"], "action": "log"},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1m",
   "key": ["ip", "cookie:session", "header:x-user"], "penalty": "5m"}
]"#;

fn request(path: &str) -> RequestAttrs {
    RequestAttrs::new("198.51.100.1".parse().unwrap())
        .with_path(path)
        .with_header("authorization", "Bearer tok-SECRET-1")
        .with_header("x-tenant", "acme<b>")
        .with_header("x-user", "alice")
        .with_header("cookie", "session=sess-SECRET-2")
}

#[tokio::test]
async fn the_clients_a_log_rule_would_hit_are_readable_and_credentials_redacted() {
    let clock = ManualClock::new(1_767_225_600_000);
    let l = Limiter::builder(RuleSet::from_json(RULES).unwrap())
        .clock(clock)
        .build();
    // Over the limit twice: the second refusal finds the subject waiting
    // for its label, which the third request gives.
    for _ in 0..4 {
        l.check(&request("/api")).await;
        l.check(&request("/login")).await;
    }
    let app = Admin::new(l.clone()).router();
    let page = send(&app, get("/")).await;
    let json = send(&app, get("/state.json")).await.body;
    for body in [&page.body, &json] {
        assert!(!body.contains("SECRET"), "a credential leaked:\n{body}");
    }
    let attention = &page.body[page.body.find("Needs attention").unwrap()..];
    let attention = &attention[..attention.find("Penalties in force").unwrap()];
    assert!(
        attention.contains(
            "ip=198.51.100.1, header:authorization=[redacted], header:x-tenant=acme&lt;b&gt;"
        ),
        "{attention}"
    );
    let shadow = l.subject_of("api.shadow", &request("/api")).unwrap();
    assert!(attention.contains(&shadow.to_hex()), "the digest beside it");

    let penalties = &page.body[page.body.find("Penalties in force").unwrap()..];
    assert!(
        penalties.contains("ip=198.51.100.1, cookie:session=[redacted], header:x-user=alice"),
        "{penalties}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["penalties"][0]["client"],
        "ip=198.51.100.1, cookie:session=[redacted], header:x-user=alice"
    );
    let login = l.subject_of("login", &request("/login")).unwrap();
    assert_eq!(v["penalties"][0]["subject"], login.to_hex(), "the identity");
}
