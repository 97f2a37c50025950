//! `ratelimit replay`'s progress bar: drawn on a terminal (here a
//! pseudo-terminal from util-linux's `script`), absent otherwise.

mod support;

use std::process::Command;

use support::{file, ratelimit};

const RULES: &str = r#"[{"id": "one", "expression": "true", "algorithm": "fixed_window",
  "limit": 100, "period": "1m", "key": ["ip"]}]"#;

/// 40,000 lines: more than two of the bar's updates (every 16,384 lines).
fn log() -> String {
    (0..40_000)
        .map(|i| {
            format!(
                "192.0.2.{} - - [01/Dec/2026:10:{:02}:{:02} +0000] \"GET / HTTP/1.1\" 200 1\n",
                i % 200,
                i / 60 % 60,
                i % 60
            )
        })
        .collect()
}

#[test]
fn on_a_terminal_the_bar_shows_bytes_rate_and_time_left() {
    let rules = file("rules.json", RULES.as_bytes());
    let log = file("access.log", log().as_bytes());
    let command = format!(
        "{} replay {} --log {} > /dev/null",
        env!("CARGO_BIN_EXE_ratelimit"),
        rules.display(),
        log.display()
    );
    // A terminal says what it is: without `TERM` (CI, `env -i`) indicatif
    // takes the terminal for a dumb one and draws nothing.
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .output()
        .expect("util-linux's `script` runs (apt-get install bsdutils)");
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{seen}");
    assert!(seen.contains(" lines/s, "), "{seen}");
    assert!(seen.contains(" MiB/2.57 MiB, "), "{seen}");
    assert!(seen.contains(" left"), "{seen}");
}

#[test]
fn off_a_terminal_nothing_extra_is_written() {
    let rules = file("rules.json", RULES.as_bytes());
    let log = file("access.log", log().as_bytes());
    let run = ratelimit(&[
        "replay",
        rules.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.stderr, "");
    assert!(run
        .stdout
        .starts_with(&format!("{}: 40000 line(s)", log.display())));
}
