//! The `ratelimit` command line, as a library: every command runs the
//! rule set through `ratelimit-core`'s own loader, selection and
//! algorithms, never a second implementation.
//!
//! | command | what it does |
//! | --- | --- |
//! | `check FILE...` | loads rule files; every error and warning with file, line, column, rule and field |
//! | `audit FILE` | the production checklist's gates as findings |
//! | `explain FILE --request 'POST /login' ...` | which rules a request runs, their keys and subject digests |
//! | `replay FILE --log access.log` | an access log through the rules on the in-memory backend |
//!
//! The guide's chapter [The command line](guide::cli) shows each with its
//! output; [The production checklist](guide::production) explains what
//! `audit` checks.
//!
//! # Examples
//!
//! ```
//! let mut out = Vec::new();
//! let code = ratelimit_cli::run(&["help".to_owned()], &mut out, &mut Vec::new());
//! assert_eq!(code, 0);
//! assert!(String::from_utf8(out).unwrap().contains("ratelimit check"));
//! ```

pub mod args;
pub mod audit;
pub mod check;
pub mod diag;
pub mod explain;
#[cfg(any(doc, doctest))]
pub mod guide;
pub mod input;
pub mod locate;
pub mod replay;
pub mod request;
pub mod time;

use std::io::Write;

use args::{Args, UsageError};

/// Exit code of a command line that does not parse.
pub const EXIT_USAGE: i32 = 64;

const USAGE: &str = "\
usage:
  ratelimit check [--format text|json] [--deny-warnings] [--now TIME] FILE...
  ratelimit audit [--format text|json] [--deny-warnings] [--now TIME] FILE
  ratelimit explain FILE --request 'METHOD /path?query' [-H 'name: value']... [--ip IP]
        [--host HOST] [--claims JSON] [--app name=value]... [--viewer country=FR]...
        [--hash-key HEX32] [--now TIME] [--format text|json]
  ratelimit replay FILE --log ACCESS_LOG [--format combined|json] [--speed max] [--top N]
  ratelimit help

exit codes: 0 fine, 1 errors, 2 warnings under --deny-warnings, 64 bad usage";

/// Runs the command line `words` (without the program name), writing
/// results to `out` and complaints to `err`; returns the exit code.
pub fn run(words: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some((command, rest)) = words.split_first() else {
        write_ok(writeln!(err, "{USAGE}"));
        return EXIT_USAGE;
    };
    let result = match command.as_str() {
        "check" => Args::parse(rest, &check::OPTIONS).and_then(|a| check::run(&a, out)),
        "audit" => Args::parse(rest, &audit::OPTIONS).and_then(|a| audit::run(&a, out)),
        "explain" => Args::parse(rest, &explain::OPTIONS).and_then(|a| explain::run(&a, out)),
        "replay" => Args::parse(rest, &replay::OPTIONS).and_then(|a| replay::run(&a, out)),
        "help" | "--help" | "-h" => {
            write_ok(writeln!(out, "{USAGE}"));
            Ok(0)
        }
        "--version" | "-V" => {
            write_ok(writeln!(out, "ratelimit {}", env!("CARGO_PKG_VERSION")));
            Ok(0)
        }
        other => Err(UsageError(format!("unknown command {other:?}"))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            write_ok(writeln!(err, "ratelimit: {e}\n{USAGE}"));
            EXIT_USAGE
        }
    }
}

/// Ignores a failed write to the terminal (a closed pipe): there is no one
/// left to tell.
pub(crate) fn write_ok(_: std::io::Result<()>) {}

/// The `--format` option: `text` (the default) or `json`.
pub(crate) fn format_of(args: &Args) -> Result<diag::Format, UsageError> {
    match args.value("--format") {
        None | Some("text") => Ok(diag::Format::Text),
        Some("json") => Ok(diag::Format::Json),
        Some(f) => Err(UsageError(format!(
            "--format must be text or json, not {f:?}"
        ))),
    }
}

/// The `--now` option (an RFC 3339 time), else the system clock.
pub(crate) fn now_of(args: &Args) -> Result<u64, UsageError> {
    use ratelimit_core::Clock;
    match args.value("--now") {
        None => Ok(ratelimit_core::SystemClock.now_ms()),
        Some(t) => time::rfc3339_ms(t)
            .ok_or_else(|| UsageError(format!("--now must be an RFC 3339 time, not {t:?}"))),
    }
}
