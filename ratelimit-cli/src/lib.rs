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
//! The library API is what another program needs to run the commands and
//! read their reports: [`Cli`] and its options ([`CheckOptions`],
//! [`AuditOptions`], [`ExplainOptions`], [`ReplayOptions`]), [`run`] and
//! [`execute`], and the reports ([`check_text`]'s [`Diagnostic`]s,
//! [`audit()`]'s [`Finding`]s, a [`Replay`]'s [`Tally`]). The binary's own
//! parts (parsers, layout, time formats) are private.
//!
//! The guide's chapter [The command line](guide::cli) shows each with its
//! output; [The production checklist](guide::production) explains what
//! `audit` checks.
//!
//! # Examples
//!
//! ```
//! let mut out = Vec::new();
//! let code = ratelimit_cli::run(&["--help".to_owned()], &mut out, &mut Vec::new());
//! assert_eq!(code, 0);
//! assert!(String::from_utf8(out).unwrap().contains("replay"));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod audit;
mod check;
mod cli;
mod diag;
mod explain;
#[cfg(any(doc, doctest))]
pub mod guide;
mod input;
mod locate;
mod replay;
mod request;
mod time;

use std::io::Write;

use clap::Parser;

pub use audit::{audit, Finding, Gate, Level};
pub use check::check_text;
pub use cli::{
    AuditOptions, CheckOptions, Cli, Command, ExplainOptions, Forwarded, LogFormat, OutputFormat,
    ReplayOptions, RequestLine, Speed, TimeUnit,
};
pub use diag::{Diagnostic, Severity};
pub use locate::Position;
pub use replay::{parse_log_line, Client, LogError, LogLine, Replay, RuleTally, Tally};

/// Exit code of a command line that does not parse.
pub const EXIT_USAGE: i32 = 64;

/// Runs the command line `words` (without the program name), writing
/// results to `out` and complaints to `err`; returns the exit code: help
/// and `--version` exit 0, a command line that does not parse
/// [`EXIT_USAGE`].
pub fn run(words: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let argv = std::iter::once("ratelimit").chain(words.iter().map(String::as_str));
    match Cli::try_parse_from(argv) {
        Ok(cli) => execute(&cli, out),
        Err(e) if !e.use_stderr() => {
            // Help, or the version (which clap renders without a newline).
            let text = e.render().to_string();
            write_ok(writeln!(out, "{}", text.trim_end()));
            0
        }
        Err(e) => {
            write_ok(write!(err, "{}", e.render()));
            EXIT_USAGE
        }
    }
}

/// Runs a parsed command line, writing its answer to `out`; returns the
/// exit code (0 fine, 1 errors, 2 warnings under `--deny-warnings`).
pub fn execute(cli: &Cli, out: &mut dyn Write) -> i32 {
    match &cli.command {
        Command::Check(o) => check::run(o, out),
        Command::Audit(o) => audit::run(o, out),
        Command::Explain(o) => explain::run(o, out),
        Command::Replay(o) => replay::run(o, out),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "ratelimit", out);
            0
        }
    }
}

/// Ignores a failed write to the terminal (a closed pipe): there is no one
/// left to tell.
pub(crate) fn write_ok(_: std::io::Result<()>) {}
