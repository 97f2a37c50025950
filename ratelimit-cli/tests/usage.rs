//! The command line's grammar: help per command, `--version`, "did you
//! mean" for a misspelt option, completion scripts, and exit code 64 for
//! every bad usage.

mod support;

use support::ratelimit;

#[test]
fn each_command_has_its_own_help() {
    for (command, option) in [
        ("check", "--deny-warnings"),
        ("audit", "--deny-warnings"),
        ("explain", "--request"),
        ("replay", "--trusted-proxies"),
    ] {
        let run = ratelimit(&[command, "--help"]);
        assert_eq!(run.code, 0, "{command}: {}", run.stderr);
        assert!(
            run.stdout.contains(&format!("Usage: ratelimit {command}")),
            "{command}: {}",
            run.stdout
        );
        assert!(run.stdout.contains(option), "{command}: {}", run.stdout);
    }
    let run = ratelimit(&["--help"]);
    assert_eq!(run.code, 0);
    for command in ["check", "audit", "explain", "replay", "completions"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
    }
}

#[test]
fn version_is_the_crates() {
    let run = ratelimit(&["--version"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        format!("ratelimit {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_misspelt_option_gets_a_suggestion_and_64() {
    let run = ratelimit(&[
        "replay",
        "rules.json",
        "--log",
        "a.log",
        "--time-units",
        "ms",
    ]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .contains("tip: a similar argument exists: '--time-unit'"),
        "{}",
        run.stderr
    );
    let run = ratelimit(&["chek", "rules.json"]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .contains("tip: a similar subcommand exists: 'check'"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_usage_exits_64() {
    for args in [
        &[][..],
        &["check"],
        &["check", "--format", "xml", "a.json"],
        &["check", "--now", "yesterday", "a.json"],
        &["explain", "a.json"],
        &["explain", "a.json", "--request", "GET"],
        &["explain", "a.json", "--request", "GET /", "-H", "no colon"],
        &[
            "explain",
            "a.json",
            "--request",
            "GET /",
            "--hash-key",
            "12",
        ],
        &["replay", "a.json"],
        &["replay", "a.json", "--log", "a.log", "--time-unit", "us"],
        &[
            "replay",
            "a.json",
            "--log",
            "a.log",
            "--trusted-proxies",
            "10.0.0.0/33",
        ],
        &[
            "replay",
            "a.json",
            "--log",
            "a.log",
            "--hops",
            "1",
            "--trusted-proxies",
            "10.0.0.0/8",
        ],
        &["completions", "tcsh"],
    ] {
        let run = ratelimit(args);
        assert_eq!(run.code, 64, "{args:?}: {}", run.stderr);
        // No command at all: the usage, on standard error.
        let start = if args.is_empty() {
            "Check, audit"
        } else {
            "error: "
        };
        assert!(run.stderr.starts_with(start), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

#[test]
fn completion_scripts_name_the_commands_and_options() {
    for (shell, marker) in [
        ("bash", "complete -F _ratelimit"),
        ("zsh", "#compdef ratelimit"),
        ("fish", "complete -c ratelimit"),
    ] {
        let run = ratelimit(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains("trusted-proxies"), "{shell}");
        assert!(run.stdout.contains("replay"), "{shell}");
    }
}
