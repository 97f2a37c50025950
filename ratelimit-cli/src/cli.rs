//! The command line's grammar: the commands and their options, derived
//! with `clap` (help per command, `--version`, "did you mean" for a
//! misspelt option, completions).

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ratelimit_core::{Cidr, HashKey};

pub use crate::request::RequestLine;

/// The `ratelimit` command line: rule files checked, audited, explained
/// and replayed with the library's own loader, selection and algorithms.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "ratelimit",
    version,
    about = "Check, audit, explain and replay rate-limit rule files",
    after_help = "exit codes: 0 fine, 1 errors, 2 warnings under --deny-warnings, 64 bad usage"
)]
#[non_exhaustive]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// One command of the command line.
#[derive(Debug, Clone, Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Load rule files; every error and warning with file, line, column,
    /// rule and field.
    Check(CheckOptions),
    /// The production checklist's gates as findings over one rule file.
    Audit(AuditOptions),
    /// Which rules a request runs, their keys and subject digests.
    Explain(ExplainOptions),
    /// An access log through the rules on the in-memory backend.
    Replay(ReplayOptions),
    /// A completion script for a shell, on standard output.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// How `check`, `audit` and `explain` write their answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum OutputFormat {
    /// Lines for a person.
    #[default]
    Text,
    /// One JSON document, for CI annotations and scripts.
    Json,
}

/// The options of `ratelimit check`.
#[derive(Debug, Clone, Args)]
#[non_exhaustive]
pub struct CheckOptions {
    /// The rule files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// text or json.
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
    /// Exit 2 when a file has warnings.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Judge `expires_at` at this RFC 3339 time instead of now.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<u64>,
}

/// The options of `ratelimit audit`.
#[derive(Debug, Clone, Args)]
#[non_exhaustive]
pub struct AuditOptions {
    /// The rule file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// text or json.
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
    /// Exit 2 when there are warnings.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Judge `expires_at` at this RFC 3339 time instead of now.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<u64>,
}

/// The options of `ratelimit explain`.
#[derive(Debug, Clone, Args)]
#[non_exhaustive]
pub struct ExplainOptions {
    /// The rule file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The request: 'METHOD /path?query'.
    #[arg(long, value_name = "'METHOD /path'", value_parser = crate::request::request_line)]
    pub request: RequestLine,
    /// A request header, 'name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "'name: value'", value_parser = crate::request::header)]
    pub headers: Vec<(String, String)>,
    /// The client's address.
    #[arg(long, default_value = "192.0.2.1")]
    pub ip: std::net::IpAddr,
    /// The Host header.
    #[arg(long)]
    pub host: Option<String>,
    /// Verified JWT claims, a JSON object of strings.
    #[arg(long, value_name = "JSON", value_parser = crate::request::claims)]
    pub claims: Option<BTreeMap<String, String>>,
    /// An application value, name=value (repeatable).
    #[arg(long = "app", value_name = "name=value", value_parser = crate::request::name_value)]
    pub app: Vec<(String, String)>,
    /// A viewer fact: country, asnum, ja4 or locale=value (repeatable).
    #[arg(long = "viewer", value_name = "name=value", value_parser = crate::request::viewer)]
    pub viewer: Vec<(String, String)>,
    /// The hash key subjects are digested with (32 hex digits), else the
    /// library's default key.
    #[arg(long, value_name = "HEX32", value_parser = crate::request::hash_key)]
    pub hash_key: Option<HashKey>,
    /// The time to explain at (RFC 3339), else now.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<u64>,
    /// text or json.
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The format of an access log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum LogFormat {
    /// nginx's `combined` (or the common log format), and `main`, which
    /// adds `"$http_x_forwarded_for"` after the user agent.
    #[default]
    #[value(alias = "main")]
    Combined,
    /// One JSON object per line.
    Json,
}

/// The unit of a JSON-lines time written as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum TimeUnit {
    /// Unix seconds, with an optional fraction (nginx's `$msec`).
    #[default]
    S,
    /// Unix milliseconds (JavaScript's `Date.now()`).
    Ms,
}

/// The forwarding header a trusted proxy writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum Forwarded {
    /// `X-Forwarded-For: client, proxy1` (nginx's `main` format's last
    /// field, JSON lines' `forwarded_for`).
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client` (a `forwarded` header of JSON lines).
    Forwarded,
}

/// How fast a replay runs: only as fast as it can (it never waits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum Speed {
    /// As fast as the machine goes.
    #[default]
    Max,
}

/// The options of `ratelimit replay`.
#[derive(Debug, Clone, Args)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// The rule file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The access log.
    #[arg(long, value_name = "ACCESS_LOG")]
    pub log: PathBuf,
    /// The log's format: combined (or main), or json (JSON lines).
    #[arg(long, value_enum, default_value_t)]
    pub format: LogFormat,
    /// The unit of JSON-lines times written as numbers.
    #[arg(long, value_enum, default_value_t)]
    pub time_unit: TimeUnit,
    /// The load balancers in front of the service, as the layer's
    /// `TrustedProxies::cidrs`: the client is read from the forwarded field.
    #[arg(long, value_name = "CIDR", num_args = 1.., conflicts_with = "hops")]
    pub trusted_proxies: Vec<Cidr>,
    /// N proxies in front of the service, as the layer's
    /// `TrustedProxies::hops`.
    #[arg(long, value_name = "N")]
    pub hops: Option<usize>,
    /// The forwarding header the proxies write, as the layer's
    /// `TrustedProxies::header`.
    #[arg(long, value_enum, default_value_t)]
    pub forwarded_header: Forwarded,
    /// Clients shown per rule.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// How fast: only max (replay never waits).
    #[arg(long, value_enum, default_value_t)]
    pub speed: Speed,
    /// Judge `expires_at` at this RFC 3339 time instead of now.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<u64>,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// `--now`: an RFC 3339 time as Unix milliseconds.
fn parse_now(s: &str) -> Result<u64, String> {
    crate::time::rfc3339_ms(s).ok_or_else(|| format!("not an RFC 3339 time after 1970: {s:?}"))
}

/// `--now`, else the system clock.
pub(crate) fn now_or_clock(now: Option<u64>) -> u64 {
    use ratelimit_core::Clock;
    now.unwrap_or_else(|| ratelimit_core::SystemClock.now_ms())
}
