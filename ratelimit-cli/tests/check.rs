//! `ratelimit check`: errors with file, line, column, rule and field;
//! warnings; exit codes; JSON; bad input.

mod support;

use support::{file, ratelimit, root};

const OK_RULE: &str = r#"{"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
 "limit": 100, "period": "1m", "key": ["ip"]}"#;

#[test]
fn every_error_is_reported_with_its_place() {
    let text = format!(
        "[\n {OK_RULE},\n {{\"id\": \"a\", \"expression\": \"true\", \"algorithm\": \"fixed_window\",\n  \"limit\": 0, \"period\": \"1m\", \"key\": [\"ip\"]}},\n {{\"id\": \"b\", \"expression\": \"http.request.uri.path eq \\\"/x\\\"\",\n  \"algorithm\": \"sliding_window\", \"limit\": 5, \"period\": \"1m\", \"key\": [\"ip\"], \"bogus\": 1}}\n]"
    );
    let path = file("errors.json", text.as_bytes());
    let run = ratelimit(&["check", path.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let p = path.display();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("{p}:5:3: error: rule \"a\", field \"limit\": must be 1 to 1000000000")
    );
    assert!(
        lines[1].starts_with(&format!("{p}:7:77: error: rule \"b\", field \"bogus\": ")),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "1 file(s): 2 error(s), 0 warning(s)");
}

/// Issue 41: a rule with a bad period and a bad expression shows both, each
/// at its own field.
#[test]
fn every_error_of_one_rule_is_reported() {
    let text = "[{\"id\": \"a\", \"expression\": \"http.host eq 'x'\",\n  \"algorithm\": \"fixed_window\", \"limit\": 5, \"period\": \"1 minute\", \"key\": [\"client_ip\"]}]";
    let path = file("two.json", text.as_bytes());
    let run = ratelimit(&["check", path.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let p = path.display();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{p}:2:44: error: rule \"a\", field \"period\": \"1 minute\" is not a duration: use \"1m\" (units s, m, h, d, without spaces)"),
            format!("{p}:1:14: error: rule \"a\", field \"expression\": column 14: strings take double quotes, not `'`: write `\"x\"`"),
            format!("{p}:2:66: error: rule \"a\", field \"key\": unknown key part \"client_ip\": did you mean \"ip\"? The parts are ip, host, method, country, asnum, ja4, locale, constant, header:<name>, cookie:<name>, query:<name>, jwt_claim:<name>, app:<name>"),
            "1 file(s): 3 error(s), 0 warning(s)".to_owned(),
        ]
    );
}

#[test]
fn warnings_pass_unless_denied() {
    let text = format!(
        "[{OK_RULE},\n {{\"id\": \"old\", \"expression\": \"http.request.uri.path eq \\\"/a\\\"\",\n \"algorithm\": \"sliding_window\", \"limit\": 5, \"period\": \"1m\", \"key\": [\"ip\"],\n \"expires_at\": \"2026-01-01T00:00:00Z\"}}]"
    );
    let path = file("warn.json", text.as_bytes());
    let path = path.to_str().unwrap();
    let at = ["--now", "2026-06-01T00:00:00Z"];
    let run = ratelimit(&["check", at[0], at[1], path]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains(&format!(
        "{path}:5:2: warning: rule \"old\", field \"expires_at\": has passed"
    )));
    let run = ratelimit(&["check", "--deny-warnings", at[0], at[1], path]);
    assert_eq!(run.code, 2);
    // Before it expires, nothing to say.
    let run = ratelimit(&[
        "check",
        "--deny-warnings",
        "--now",
        "2025-12-01T00:00:00Z",
        path,
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "1 file(s): 0 error(s), 0 warning(s)\n")
    );
}

#[test]
fn json_format_for_ci() {
    let path = file("bad.json", b"[{\"id\": 1,}");
    let run = ratelimit(&["check", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["errors"], 1);
    let d = &doc["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(11))
    );
    assert_eq!(d["severity"], "error");
    assert!(d["message"]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON: trailing comma"));
}

#[test]
fn binary_and_huge_files_are_refused_unread() {
    let bin = file("bin.json", b"[\x7fELF\0\0\x01");
    let run = ratelimit(&["check", bin.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(run
        .stdout
        .contains("not a text file (a NUL byte or invalid UTF-8 at byte 5)"));
    // 1 GB, sparse: refused from its size, never read.
    let huge = file("huge.json", b"");
    std::fs::File::options()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let started = std::time::Instant::now();
    let run = ratelimit(&["check", huge.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(run
        .stdout
        .contains("the file is 1073741824 bytes, more than the 16777216 bytes read"));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let run = ratelimit(&["check", "/nonexistent/rules.json"]);
    assert_eq!(run.code, 1);
    assert!(run
        .stdout
        .contains("/nonexistent/rules.json: error: No such file"));
}

#[test]
fn usage_errors_exit_64() {
    assert_eq!(ratelimit(&["check"]).code, 64);
    assert_eq!(ratelimit(&["check", "--format", "xml", "a"]).code, 64);
    let run = ratelimit(&["frobnicate"]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr.contains("unrecognized subcommand 'frobnicate'"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_repository_examples_load() {
    let dir = root().join("examples/rules");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let run = ratelimit(&args);
    assert_eq!(run.code, 0, "{}", run.stdout);
}
