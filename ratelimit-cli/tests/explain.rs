//! `ratelimit explain`: the rules a request runs, their keys and subjects,
//! from the limiter's own selection.

mod support;

use support::{file, ratelimit, root};

fn login_json() -> String {
    root()
        .join("examples/rules/login.json")
        .display()
        .to_string()
}

#[test]
fn the_login_tuples_for_one_request() {
    let f = login_json();
    let run = ratelimit(&[
        "explain",
        &f,
        "--request",
        "POST /login",
        "-H",
        "x-user: a",
        "--ip",
        "203.0.113.7",
        "--app",
        "username=ann",
        "--now",
        "2026-12-01T00:00:00Z",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "POST /login from 203.0.113.7 at 2026-12-01T00:00:00.000Z"
    );
    assert!(
        lines[2].starts_with("   - per-ip               site-wide block runs"),
        "{}",
        run.stdout
    );
    assert!(
        lines[4].starts_with("   1 login-ip-user        other     block runs"),
        "{}",
        run.stdout
    );
    assert!(lines[5].contains("key ip=\"203.0.113.7\" app:username=\"ann\" -> subject "));
    // per-ip and login-ip key the same address: the same subject.
    let subject = |l: &str| l.rsplit("subject ").next().unwrap().to_owned();
    assert_eq!(subject(lines[3]), subject(lines[7]));
    assert_eq!(lines.last(), Some(&"every matching rule runs"));
}

#[test]
fn json_reasons_and_fallbacks() {
    let f = login_json();
    let run = ratelimit(&[
        "explain",
        &f,
        "--request",
        "POST /login",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let user = &doc["rules"][3];
    assert_eq!(user["rule"], "login-user");
    // No username: the rule falls back to the client IP.
    assert_eq!(user["fallback_ip"], true);
    assert_eq!(user["key"][0]["value"], serde_json::Value::Null);
    let run = ratelimit(&["explain", &f, "--request", "GET /", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["rules"][1]["status"], "no match");
}

#[test]
fn the_cap_is_shown() {
    let mut rules = Vec::new();
    for i in 0..6 {
        rules.push(format!(
            r#"{{"id": "r{i}", "expression": "http.request.method eq \"GET\"", "algorithm": "sliding_window",
                "limit": 5, "period": "1m", "key": ["ip"]{}}}"#,
            if i == 5 { r#", "penalty": "1m""# } else { "" }
        ));
    }
    let path = file("cap.json", format!("[{}]", rules.join(",")).as_bytes());
    let run = ratelimit(&["explain", path.to_str().unwrap(), "--request", "GET /"]);
    assert!(run.stdout.contains("   - r5                   other     block pushed out by the cap; its penalty cache is still consulted"), "{}", run.stdout);
    assert!(run
        .stdout
        .ends_with("more rules matched than the cap of 5: the rest were pushed out\n"));
}

#[test]
fn bad_requests_are_usage_errors() {
    let f = login_json();
    for (args, msg) in [
        (
            vec!["--request", "POST"],
            "for '--request <'METHOD /path'>': must be 'METHOD /path'",
        ),
        (
            vec!["--request", "GET /", "--ip", "nope"],
            "invalid value 'nope' for '--ip <IP>'",
        ),
        (
            vec!["--request", "GET /", "-H", "no-colon"],
            "for '--header <'name: value'>': must be 'name: value'",
        ),
        (
            vec!["--request", "GET /", "--claims", "[1]"],
            "for '--claims <JSON>': must be a JSON object",
        ),
        (
            vec!["--request", "GET /", "--hash-key", "zz"],
            "for '--hash-key <HEX32>': must be 32 hex digits",
        ),
        (
            vec![],
            "the following required arguments were not provided:\n  --request <'METHOD /path'>",
        ),
    ] {
        let mut all = vec!["explain", f.as_str()];
        all.extend(args);
        let run = ratelimit(&all);
        assert_eq!(run.code, 64, "{all:?}");
        assert!(run.stderr.contains(msg), "{all:?}: {}", run.stderr);
    }
    let bad = file("explain-bad.json", b"not json");
    let run = ratelimit(&["explain", bad.to_str().unwrap(), "--request", "GET /"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("invalid JSON"), "{}", run.stdout);
}
