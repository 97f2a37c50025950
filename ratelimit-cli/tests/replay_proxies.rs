//! `ratelimit replay` behind a load balancer: the client read from the
//! forwarded field with the layer's trusted-proxy settings, as production
//! decides.

mod support;

use support::{file, ratelimit};

/// Three logins a minute per client address.
const LOGIN: &str = r#"[{"id": "login", "expression": "http.request.uri.path eq \"/login\"",
  "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"]}]"#;

/// Five logins through one balancer (10.0.0.2): three from 203.0.113.7,
/// two from 198.51.100.4; each client's own first entry (a forged one on
/// the last line) is left of what the balancer appended.
fn main_format() -> String {
    let clients = [
        "203.0.113.7",
        "198.51.100.4",
        "203.0.113.7",
        "198.51.100.4",
        "1.2.3.4, 203.0.113.7",
    ];
    clients
        .iter()
        .enumerate()
        .map(|(s, xff)| {
            format!("10.0.0.2 - - [01/Dec/2026:10:00:0{s} +0000] \"POST /login HTTP/1.1\" 401 12 \"-\" \"curl/8.5\" \"{xff}\"\n")
        })
        .collect()
}

fn replay(log: &str, extra: &[&str]) -> support::Run {
    let rules = file("rules.json", LOGIN.as_bytes());
    let log = file("access.log", log.as_bytes());
    let mut args = vec![
        "replay",
        rules.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ];
    args.extend(extra);
    let run = ratelimit(&args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run
}

fn login_row(run: &support::Run) -> &str {
    run.stdout
        .lines()
        .find(|l| l.starts_with("login "))
        .unwrap_or_else(|| panic!("no login row: {}", run.stdout))
}

#[test]
fn without_trusted_proxies_the_balancer_is_one_client_refused_twice() {
    let run = replay(&main_format(), &["--format", "main"]);
    assert_eq!(
        login_row(&run),
        format!("{:<24} {:>10} {:>12} {:>10}", "login", 5, 0, 2)
    );
    assert!(run.stdout.contains("    10.0.0.2 "), "{}", run.stdout);
}

#[test]
fn trusted_proxies_see_two_clients_and_refuse_none() {
    for extra in [
        &["--format", "main", "--trusted-proxies", "10.0.0.0/8"][..],
        &["--format", "main", "--hops", "1"],
        &["--trusted-proxies", "10.0.0.0/8", "192.168.0.0/16"],
    ] {
        let run = replay(&main_format(), extra);
        assert_eq!(
            login_row(&run),
            format!("{:<24} {:>10} {:>12} {:>10}", "login", 5, 0, 0),
            "{extra:?}"
        );
        assert!(
            run.stdout.contains("5 forwarded, 0 limited"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn a_fourth_login_through_the_balancer_is_refused_to_its_client() {
    let mut log = main_format();
    log += "10.0.0.2 - - [01/Dec/2026:10:00:09 +0000] \"POST /login HTTP/1.1\" 401 12 \"-\" \"curl/8.5\" \"203.0.113.7\"\n";
    let run = replay(&log, &["--trusted-proxies", "10.0.0.0/8"]);
    assert_eq!(
        login_row(&run),
        format!("{:<24} {:>10} {:>12} {:>10}", "login", 6, 0, 1)
    );
    assert!(run.stdout.contains("    203.0.113.7 "), "{}", run.stdout);
    // A peer outside the trusted ranges is the client, whatever it forwards.
    let direct = log.replace("10.0.0.2 -", "192.0.2.50 -");
    let run = replay(&direct, &["--trusted-proxies", "10.0.0.0/8"]);
    assert_eq!(
        login_row(&run),
        format!("{:<24} {:>10} {:>12} {:>10}", "login", 6, 0, 3)
    );
}

#[test]
fn json_lines_carry_the_forwarded_field() {
    let log: String = ["203.0.113.7", "198.51.100.4", "203.0.113.7", "198.51.100.4", "203.0.113.7"]
        .iter()
        .enumerate()
        .map(|(s, xff)| {
            format!("{{\"ip\": \"10.0.0.2\", \"time\": {}, \"method\": \"POST\", \"path\": \"/login\", \"forwarded_for\": \"{xff}\"}}\n", 1_796_119_200 + s)
        })
        .collect();
    let run = replay(&log, &["--format", "json"]);
    assert!(login_row(&run).ends_with(" 2"), "{}", run.stdout);
    let run = replay(&log, &["--format", "json", "--hops", "1"]);
    assert!(login_row(&run).ends_with(" 0"), "{}", run.stdout);
}

#[test]
fn the_rfc_7239_header_is_read_when_asked_for() {
    let log: String = ["203.0.113.7", "198.51.100.4", "203.0.113.7", "198.51.100.4", "203.0.113.7"]
        .iter()
        .enumerate()
        .map(|(s, client)| {
            format!("{{\"ip\": \"10.0.0.2\", \"time\": {}, \"method\": \"POST\", \"path\": \"/login\", \"headers\": {{\"Forwarded\": \"for={client}\"}}}}\n", 1_796_119_200 + s)
        })
        .collect();
    // X-Forwarded-For (the default) is absent: the balancer is the client.
    let run = replay(&log, &["--format", "json", "--hops", "1"]);
    assert!(login_row(&run).ends_with(" 2"), "{}", run.stdout);
    let run = replay(
        &log,
        &[
            "--format",
            "json",
            "--hops",
            "1",
            "--forwarded-header",
            "forwarded",
        ],
    );
    assert!(login_row(&run).ends_with(" 0"), "{}", run.stdout);
}
