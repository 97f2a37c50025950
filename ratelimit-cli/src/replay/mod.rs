//! `ratelimit replay FILE --log access.log`: a recorded access log through
//! the rule set on the in-memory backend, the clock set to each line's
//! time: the shadow phase done offline.
//!
//! Lines that do not parse are counted and skipped (the first few shown).
//! A line earlier than the latest time seen is replayed at that latest
//! time, never earlier (the algorithms' clock does not go back), and
//! counted as out of order with the largest step back.

pub mod log;
mod output;
pub mod tally;

use std::io::{BufRead, Read, Write};

use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, Outcome, Verdict};

use crate::args::{valued, Args, Opt, UsageError};
pub use log::LogFormat;
pub use tally::Tally;

/// The options of `ratelimit replay`.
pub const OPTIONS: [Opt; 5] = [
    valued("--log"),
    valued("--format"),
    valued("--speed"),
    valued("--top"),
    valued("--now"),
];

/// A replay in progress.
#[derive(Debug)]
pub struct Replay {
    limiter: Limiter,
    clock: ManualClock,
    format: LogFormat,
    /// What it counted so far.
    pub tally: Tally,
}

impl Replay {
    /// A replay of logs in `format` through `rules`, on the in-memory
    /// backend.
    pub fn new(rules: RuleSet, format: LogFormat) -> Self {
        let clock = ManualClock::new(0);
        let limiter = Limiter::builder(rules)
            .clock(clock.clone())
            .reports(true)
            .build();
        Replay {
            limiter,
            clock,
            format,
            tally: Tally::default(),
        }
    }

    /// Replays line `number` (from 1).
    pub fn line(&mut self, number: u64, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        self.tally.lines += 1;
        let parsed = match log::parse(line, self.format) {
            Ok(l) => l,
            Err(e) => return self.tally.bad_line(number, e.0, line),
        };
        let now = self.tally.time_for(parsed.time_ms);
        self.clock.set_ms(now);
        let verdict = block_on(self.limiter.check(&parsed));
        let ip = parsed.ip.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into());
        let outcome = match verdict.outcome {
            Outcome::Forward => 0,
            Outcome::Limited => 1,
            Outcome::BadRequest => 2,
            _ => 3,
        };
        self.tally.outcomes[outcome] += 1;
        for r in &verdict.reports {
            self.tally.report(r, ip, now);
        }
        if parsed.status != 0 && verdict.is_forward() && !verdict.ticket.is_empty() {
            self.limiter.record_response(&verdict.ticket, parsed.status);
        }
    }

    /// Replays every line of `input`. A line longer than
    /// [`log::MAX_LINE`] or not UTF-8 counts as bad.
    ///
    /// # Errors
    ///
    /// Reading `input` failed.
    pub fn read(&mut self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut number = 0;
        loop {
            buf.clear();
            let n = Read::take(&mut input, log::MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
            if n == 0 {
                return Ok(());
            }
            number += 1;
            if buf.len() > log::MAX_LINE && buf.last() != Some(&b'\n') {
                // Too long: skip to its end.
                let mut rest = Vec::new();
                while Read::take(&mut input, 1 << 16).read_until(b'\n', &mut rest)? > 0
                    && rest.last() != Some(&b'\n')
                {
                    rest.clear();
                }
                self.tally.lines += 1;
                let head = String::from_utf8_lossy(&buf[..80]).into_owned();
                self.tally
                    .bad_line(number, "line longer than 64 KiB", &head);
                continue;
            }
            match std::str::from_utf8(&buf) {
                Ok(line) => self.line(number, line.trim_end_matches(['\n', '\r'])),
                Err(_) => {
                    self.tally.lines += 1;
                    self.tally
                        .bad_line(number, "not UTF-8", &String::from_utf8_lossy(&buf));
                }
            }
        }
    }
}

/// The verdict: ready at once on the in-memory backend; else polled.
fn block_on(f: ratelimit_core::limiter::VerdictFuture) -> Verdict {
    match f.into_ready() {
        Ok(v) => v,
        Err(mut f) => {
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            loop {
                if let std::task::Poll::Ready(v) = std::pin::Pin::new(&mut f).poll(&mut cx) {
                    return v;
                }
                std::thread::yield_now();
            }
        }
    }
}

use std::future::Future;

/// Runs `ratelimit replay`: exit 0 when the log was replayed (bad lines
/// counted), 1 when the rules do not load, the log cannot be read, or no
/// line parsed.
///
/// # Errors
///
/// A bad option, or not exactly one file.
pub fn run(args: &Args, out: &mut dyn Write) -> Result<i32, UsageError> {
    let format = match args.value("--format") {
        None | Some("combined") => LogFormat::Combined,
        Some("json") => LogFormat::Json,
        Some(f) => {
            return Err(UsageError(format!(
                "--format must be combined or json, not {f:?}"
            )))
        }
    };
    match args.value("--speed") {
        None | Some("max") => {}
        Some(s) => {
            return Err(UsageError(format!(
                "--speed: only max is supported (replay never waits), not {s:?}"
            )))
        }
    }
    let top = match args.value("--top") {
        None => 5,
        Some(n) => n
            .parse()
            .map_err(|_| UsageError(format!("--top must be a number, not {n:?}")))?,
    };
    let now_ms = crate::now_of(args)?;
    let [file] = args.positionals.as_slice() else {
        return Err(UsageError("replay needs exactly one rule FILE".to_owned()));
    };
    let log = args
        .value("--log")
        .ok_or_else(|| UsageError("replay needs --log FILE".to_owned()))?;
    let path = std::path::Path::new(file);
    let loaded = crate::input::read_text(path)
        .ok()
        .and_then(|t| RuleSet::from_json_at(&t, now_ms).ok());
    let Some(set) = loaded else {
        for d in crate::check::check_path(path, file, now_ms) {
            crate::write_ok(writeln!(out, "{d}"));
        }
        return Ok(1);
    };
    let mut replay = Replay::new(set, format);
    let read = std::fs::File::open(log)
        .and_then(|f| replay.read(std::io::BufReader::with_capacity(1 << 16, f)));
    if let Err(e) = read {
        crate::write_ok(writeln!(out, "{log}: error: {e}"));
        return Ok(1);
    }
    crate::write_ok(output::text(out, log, &replay.tally, top));
    let parsed = replay.tally.lines - replay.tally.bad;
    Ok(if parsed == 0 { 1 } else { 0 })
}
