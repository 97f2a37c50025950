//! `ratelimit audit`: each gate fires on the rule set it names and not on
//! the worked one; the same input gives the same findings; the
//! repository's examples carry only the findings the guide explains.

mod support;

use support::{file, ratelimit, root};

const PER_IP: &str = r#"{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
  "limit": 600, "period": "1m", "burst": 100, "key": ["ip"]}"#;
const LOGIN: &str = r#"http.request.uri.path eq \"/login\""#;

/// The (code, rule) of each warning and info of auditing `rules`.
fn findings(name: &str, rules: &[String]) -> Vec<(String, String, String)> {
    let path = file(name, format!("[{}]", rules.join(",\n")).as_bytes());
    let run = ratelimit(&[
        "audit",
        "--format",
        "json",
        "--now",
        "2026-06-01T00:00:00Z",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("-").to_owned();
            (s("severity"), s("code"), s("rule"))
        })
        .collect()
}

fn rule(id: &str, expr: &str, algo: &str, key: &str, extra: &str) -> String {
    format!(
        r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "{algo}", "limit": 5,
            "period": "1m", "key": {key}{extra}}}"#
    )
}

fn warnings(f: &[(String, String, String)]) -> Vec<(&str, &str)> {
    f.iter()
        .filter(|(s, _, _)| s == "warning")
        .map(|(_, c, r)| (c.as_str(), r.as_str()))
        .collect()
}

#[test]
fn each_gate_fires_on_its_case() {
    let login = |id: &str, key: &str, extra: &str| rule(id, LOGIN, "sliding_window", key, extra);
    let f = findings(
        "gates.json",
        &[
            PER_IP.to_owned(),
            // RL001 and RL005: fixed window over every /api/ path, login too.
            rule(
                "api",
                r#"starts_with(http.request.uri.path, \"/\")"#,
                "fixed_window",
                r#"["ip", "header:x-user"]"#,
                "",
            ),
            // RL002 (no (ip, username)) and RL004 (fail open).
            login("login-ip", r#"["ip"]"#, r#", "fail_mode": "open""#),
            // RL003: ip only on a route that needs a verified token.
            rule(
                "paid",
                r#"starts_with(http.request.uri.path, \"/api/\") and http.request.jwt.claims[\"plan\"][0] eq \"free\""#,
                "sliding_window",
                r#"["ip"]"#,
                "",
            ),
            // RL006.
            rule(
                "old",
                r#"http.request.uri.path eq \"/old\""#,
                "sliding_window",
                r#"["ip"]"#,
                r#", "expires_at": "2026-01-01T00:00:00Z""#,
            ),
        ],
    );
    assert_eq!(
        warnings(&f),
        [
            ("RL001", "api"),
            ("RL002", "login-ip"),
            ("RL003", "paid"),
            ("RL004", "login-ip"),
            ("RL005", "api"),
            ("RL006", "old"),
        ]
    );
    assert_eq!(f.last().unwrap().1, "RL008");
}

#[test]
fn six_rules_on_one_request_reach_the_cap() {
    let mut rules = vec![PER_IP.to_owned()];
    for i in 0..6 {
        rules.push(rule(
            &format!("r{i}"),
            r#"http.request.method eq \"GET\""#,
            "sliding_window",
            r#"["ip"]"#,
            "",
        ));
    }
    let f = findings("cap.json", &rules);
    assert_eq!(warnings(&f), [("RL007", "-")]);
    // Six rules that no one request matches together: only noted.
    let mut rules = vec![PER_IP.to_owned()];
    for i in 0..6 {
        let expr = format!(r#"http.request.uri.path eq \"/p{i}\""#);
        rules.push(rule(
            &format!("r{i}"),
            &expr,
            "sliding_window",
            r#"["ip"]"#,
            "",
        ));
    }
    let f = findings("cap-info.json", &rules);
    assert!(
        f.contains(&("info".into(), "RL007".into(), "-".into())),
        "{f:?}"
    );
    assert!(warnings(&f).is_empty());
}

#[test]
fn the_worked_login_rule_set_passes_and_findings_are_deterministic() {
    let path = root().join("examples/rules/login.json");
    let path = path.to_str().unwrap();
    let run = ratelimit(&["audit", "--deny-warnings", path]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.ends_with("4 rule(s), 0 warning(s), 1 info\n"),
        "{}",
        run.stdout
    );
    let again = ratelimit(&["audit", "--deny-warnings", path]);
    assert_eq!(run.stdout, again.stdout);
}

#[test]
fn warnings_fail_only_when_denied_and_broken_files_exit_1() {
    let path = root().join("examples/rules/operators.json");
    let path = path.to_str().unwrap();
    assert_eq!(ratelimit(&["audit", path]).code, 0);
    assert_eq!(ratelimit(&["audit", "--deny-warnings", path]).code, 2);
    let bad = file("audit-bad.json", b"{\"rules\": 3}");
    let run = ratelimit(&["audit", bad.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("error: field \"rules\""),
        "{}",
        run.stdout
    );
}

/// The repository's example rule files carry exactly the findings that
/// docs/production.md ("The examples' findings") explains.
#[test]
fn the_examples_carry_only_explained_findings() {
    let expected: &[(&str, &[(&str, &str)])] = &[
        ("api.json", &[("RL002", "login"), ("RL004", "login")]),
        ("llm_tokens.json", &[]),
        ("login.json", &[]),
        (
            "operators.json",
            &[
                ("RL001", "search-shadow"),
                ("RL002", "login"),
                ("RL004", "login"),
            ],
        ),
        ("plans.json", &[("RL005", "plan-free")]),
    ];
    for (name, want) in expected {
        let path = root().join("examples/rules").join(name);
        let run = ratelimit(&["audit", "--format", "json", path.to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let got: Vec<(String, String)> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "warning")
            .map(|f| {
                (
                    f["code"].as_str().unwrap().into(),
                    f["rule"].as_str().unwrap_or("-").into(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(c, r)| ((*c).into(), (*r).into()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    let listed = std::fs::read_dir(root().join("examples/rules"))
        .unwrap()
        .count();
    assert_eq!(
        listed,
        expected.len(),
        "a new example rule file needs its findings listed here"
    );
}

/// Issue 41: the login rules the README and the guide's Getting started
/// show (the rule set in the raw string of the block that loads them) pass
/// the audit without a warning, and both show the same rules.
#[test]
fn the_login_rules_of_the_readme_and_getting_started_pass_without_a_warning() {
    let shown: Vec<String> = ["README.md", "docs/getting-started.md"]
        .iter()
        .map(|doc| {
            let text = std::fs::read_to_string(root().join(doc)).unwrap();
            let start = text
                .find("from_json_str(r#\"[\n  {\"id\": \"per-ip\"")
                .unwrap_or_else(|| panic!("{doc} shows no login rule set"));
            let json = &text[start + "from_json_str(r#\"".len()..];
            json[..json.find("\"#)").unwrap()].to_owned()
        })
        .collect();
    assert_eq!(shown[0], shown[1], "the README and the guide differ");
    assert!(shown[0].contains("\"login-ip-user\""));
    let path = file("login-shown.json", shown[0].as_bytes());
    let run = ratelimit(&[
        "audit",
        "--deny-warnings",
        "--format",
        "json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let warnings: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
}
