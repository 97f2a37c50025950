//! `ratelimit replay`: an access log through the rules on the in-memory
//! backend at the log's times; bad and out-of-order lines.

mod support;

use support::{file, ratelimit, root};

fn combined(ip: &str, time: &str, request: &str, status: u16) -> String {
    format!("{ip} - - [01/Dec/2026:{time} +0000] \"{request} HTTP/1.1\" {status} 12 \"-\" \"curl/8.5\"\n")
}

const ONE_PER_MINUTE: &str = r#"[{"id": "one", "expression": "true", "algorithm": "fixed_window",
  "limit": 1, "period": "1m", "key": ["ip"]}]"#;

fn run(rules: &str, log: &str, extra: &[&str]) -> support::Run {
    let rules = file("rules.json", rules.as_bytes());
    let log = file("access.log", log.as_bytes());
    let mut args = vec![
        "replay",
        rules.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ];
    args.extend(extra);
    ratelimit(&args)
}

#[test]
fn a_login_attacker_is_found_with_its_first_refusal() {
    let mut log = String::new();
    for s in 0..20 {
        log += &combined("203.0.113.7", &format!("10:00:{s:02}"), "POST /login", 401);
        log += &combined(
            "198.51.100.1",
            &format!("10:00:{s:02}"),
            "GET /api/items",
            200,
        );
    }
    let rules = std::fs::read_to_string(root().join("examples/rules/api.json")).unwrap();
    let r = run(&rules, &log, &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].ends_with("40 line(s), 40 replayed, 0 bad (skipped)"));
    assert_eq!(
        lines[1],
        "from 2026-12-01T10:00:00.000Z to 2026-12-01T10:00:19.000Z"
    );
    assert_eq!(
        lines[2],
        "requests: 25 forwarded, 15 limited (429), 0 rejected (400), 0 unavailable (503)"
    );
    // The 6th login (second 5) is the first refused; the penalty keeps the rest out.
    let login = lines.iter().position(|l| l.starts_with("login ")).unwrap();
    assert_eq!(
        lines[login],
        format!("{:<24} {:>10} {:>12} {:>10}", "login", 20, 0, 15)
    );
    assert_eq!(
        lines[login + 1],
        format!(
            "    {:<39} refused {:>8}, first at 2026-12-01T10:00:05.000Z",
            "203.0.113.7", 15
        )
    );
}

#[test]
fn bad_lines_are_counted_skipped_and_the_first_shown() {
    let mut log = combined("192.0.2.1", "10:00:00", "GET /", 200);
    for i in 0..7 {
        log += &format!("junk {i}\n");
    }
    log += "\u{0}\u{1}binary\n";
    log += &format!("{}\n", "x".repeat(70_000));
    log += &combined("192.0.2.1", "10:00:01", "GET /", 200);
    let mut bytes = log.into_bytes();
    bytes.extend_from_slice(b"\xff\xfe not utf-8\n");
    let rules = file("rules.json", ONE_PER_MINUTE.as_bytes());
    let log = file("bad.log", &bytes);
    let r = ratelimit(&[
        "replay",
        rules.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("12 line(s), 2 replayed, 10 bad (skipped)"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("  bad line 2: the client address is not an IP: \"junk 0\""));
    assert!(r.stdout.contains("  ... and 5 more bad line(s)"));
    assert_eq!(r.stdout.matches("  bad line ").count(), 5);
}

#[test]
fn out_of_order_lines_replay_at_the_latest_time() {
    // Limit 1 per calendar minute: at its own time the late line would
    // fall in the earlier window and pass; at the latest time it is refused.
    let log = combined("192.0.2.1", "10:01:00", "GET /", 200)
        + &combined("192.0.2.1", "10:00:30", "GET /", 200);
    let r = run(ONE_PER_MINUTE, &log, &[]);
    assert!(
        r.stdout.contains(
            "1 line(s) out of time order (up to 30000 ms back), replayed at the latest time seen"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("requests: 1 forwarded, 1 limited (429)"),
        "{}",
        r.stdout
    );
}

#[test]
fn json_lines() {
    let log = [
        r#"{"ip": "192.0.2.1", "time": "2026-12-01T10:00:00Z", "method": "GET", "path": "/a"}"#,
        r#"{"ip": "192.0.2.1", "time": 1796119200.5, "method": "GET", "path": "/b"}"#,
        r#"{"ip": "192.0.2.1"}"#,
    ]
    .join("\n");
    let r = run(ONE_PER_MINUTE, &log, &["--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("3 line(s), 2 replayed, 1 bad (skipped)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("bad line 3: no \"time\" (RFC 3339, or a Unix time as a number)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("requests: 1 forwarded, 1 limited (429)"),
        "{}",
        r.stdout
    );
}

#[test]
fn json_times_in_milliseconds_are_bad_lines_unless_the_unit_says_so() {
    // The fuzzer's find: `Date.now()` read as seconds is the year 58,886.
    let log = [
        r#"{"ip": "192.0.2.1", "time": 1796119200225, "path": "/a"}"#,
        r#"{"ip": "192.0.2.1", "time": 1796119200725, "path": "/b"}"#,
    ]
    .join("\n");
    let r = run(ONE_PER_MINUTE, &log, &["--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("2 line(s), 0 replayed, 2 bad"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("bad line 1: \"time\" is past the year 9999 or before 1970 as Unix seconds (milliseconds? --time-unit ms)"),
        "{}",
        r.stdout
    );
    let r = run(
        ONE_PER_MINUTE,
        &log,
        &["--format", "json", "--time-unit", "ms"],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("from 2026-12-01T10:00:00.225Z to 2026-12-01T10:00:00.725Z"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 forwarded, 1 limited"), "{}", r.stdout);
}

#[test]
fn failures_exit_non_zero() {
    // Nothing parsed.
    assert_eq!(run(ONE_PER_MINUTE, "junk\n", &[]).code, 1);
    // No such log.
    let rules = file("rules.json", ONE_PER_MINUTE.as_bytes());
    let r = ratelimit(&[
        "replay",
        rules.to_str().unwrap(),
        "--log",
        "/nonexistent.log",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("/nonexistent.log: error: No such file"),
        "{}",
        r.stdout
    );
    assert_eq!(run(ONE_PER_MINUTE, "", &["--speed", "2x"]).code, 64);
    assert_eq!(run(ONE_PER_MINUTE, "", &["--format", "w3c"]).code, 64);
    // Rules that do not load.
    assert_eq!(run("[", "", &[]).code, 1);
}

#[test]
fn the_html_report_is_one_self_contained_page() {
    let mut log = String::new();
    for s in 0..4 {
        log += &combined("203.0.113.7", &format!("10:00:{s:02}"), "GET /", 200);
    }
    log += &combined("203.0.113.7", "10:03:00", "GET /", 200);
    let page = file("report.html", b"");
    let r = run(ONE_PER_MINUTE, &log, &["--report", page.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h2>one</h2>"), "{html}");
    assert!(
        html.contains("5 requests, 0 would-limit, 3 limited"),
        "{html}"
    );
    assert!(
        html.contains("<td>203.0.113.7</td><td>3</td><td>2026-12-01T10:00:01.000Z</td>"),
        "{html}"
    );
    assert_eq!(html.matches("<svg").count(), 1);
    for external in ["<script", "src=", "href=", "url(", "@import", "<link"] {
        assert!(!html.contains(external), "{external}");
    }
    // Standard error is not a terminal here: no progress bar, nothing extra.
    assert_eq!(r.stderr, "");
    let r = run(
        ONE_PER_MINUTE,
        &log,
        &["--report", "/nonexistent/dir/r.html"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("/nonexistent/dir/r.html: error:"),
        "{}",
        r.stdout
    );
}
