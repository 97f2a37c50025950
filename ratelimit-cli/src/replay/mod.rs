//! `ratelimit replay FILE --log access.log`: a recorded access log through
//! the rule set on the in-memory backend, the clock set to each line's
//! time: the shadow phase done offline.
//!
//! Lines that do not parse are counted and skipped (the first few shown).
//! A line earlier than the latest time seen is replayed at that latest
//! time, never earlier (the algorithms' clock does not go back), and
//! counted as out of order with the largest step back.
//!
//! Behind a load balancer, the client is read from the line's forwarded
//! field (`X-Forwarded-For` in nginx's `main` format, `forwarded_for` or
//! a header in JSON lines) with the layer's own [`TrustedProxies`]: the
//! shadow run decides as production would.

mod json;
pub(crate) mod log;
mod output;
mod progress;
mod report;
pub(crate) mod tally;

use std::io::{BufRead, Read, Write};

use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, Outcome, Verdict};

use ratelimit_tower::{ForwardedHeader, TrustedProxies};

use log::MAX_LINE;
pub use log::{LogError, LogLine};
pub use tally::{Client, RuleTally, Tally};

use crate::{LogFormat, TimeUnit};

/// Parses one line in `format`, numbers in JSON lines' `time` in `unit`.
///
/// # Errors
///
/// The line is too long or does not parse.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::{parse_log_line, LogFormat, TimeUnit};
/// let l = parse_log_line(r#"203.0.113.7 - - [01/Jan/1970:00:00:02 +0000] "POST /login?x=1 HTTP/1.1" 401 12 "-" "curl/8.5""#,
///     LogFormat::Combined, TimeUnit::S).unwrap();
/// assert_eq!((l.time_ms, &*l.method, &*l.path, &*l.query, l.status), (2000, "POST", "/login", "x=1", 401));
/// assert!(parse_log_line("garbage", LogFormat::Combined, TimeUnit::S).is_err());
/// let ms = parse_log_line(r#"{"ip": "203.0.113.7", "time": 1796119200225, "path": "/"}"#,
///     LogFormat::Json, TimeUnit::S).unwrap_err();
/// assert!(ms.reason().contains("--time-unit ms"), "{ms}");
/// ```
pub fn parse_log_line(
    line: &str,
    format: LogFormat,
    unit: TimeUnit,
) -> Result<LogLine<'_>, LogError> {
    if line.len() > MAX_LINE {
        return Err(LogError("line longer than 64 KiB"));
    }
    match format {
        LogFormat::Json => json::parse(line, unit),
        _ => log::combined(line),
    }
}

/// A replay in progress.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::{LogFormat, Replay};
/// use ratelimit_core::rules::RuleSet;
///
/// let rules = RuleSet::from_json(r#"[{"id": "one", "expression": "true",
///     "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]}]"#)?;
/// let log = "192.0.2.1 - - [01/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n\
///            192.0.2.1 - - [01/Dec/2026:10:00:01 +0000] \"GET / HTTP/1.1\" 200 1\n";
/// let mut replay = Replay::new(rules, LogFormat::Combined);
/// replay.read(log.as_bytes()).unwrap();
/// assert_eq!(replay.tally.rules[0].limited, 1);
/// # Ok::<(), ratelimit_core::rules::RuleError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Replay {
    limiter: Limiter,
    clock: ManualClock,
    format: LogFormat,
    unit: TimeUnit,
    proxies: TrustedProxies,
    progress: Option<progress::Progress>,
    /// What it counted so far.
    pub tally: Tally,
}

impl Replay {
    /// A replay of logs in `format` through `rules`, on the in-memory
    /// backend: JSON-lines times in seconds, no trusted proxy.
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
            unit: TimeUnit::S,
            proxies: TrustedProxies::none(),
            progress: None,
            tally: Tally::default(),
        }
    }

    /// Reads JSON-lines times written as numbers in `unit`.
    #[must_use]
    pub fn time_unit(mut self, unit: TimeUnit) -> Self {
        self.unit = unit;
        self
    }

    /// Reads the client from the forwarded field when the logged address
    /// is one of `proxies`, as the layer does with the same settings.
    #[must_use]
    pub fn trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.proxies = proxies;
        self
    }

    /// Replays line `number` (from 1).
    pub fn line(&mut self, number: u64, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        self.tally.lines += 1;
        let mut parsed = match parse_log_line(line, self.format, self.unit) {
            Ok(l) => l,
            Err(e) => return self.tally.bad_line(number, e.reason(), line),
        };
        if let (Some(peer), false) = (parsed.ip, self.proxies.is_none()) {
            let name = self.proxies.forwarded_header().name();
            let values = (parsed.headers.iter())
                .filter(|(n, _)| n == name)
                .map(|(_, v)| &**v);
            parsed.ip = Some(self.proxies.client_ip(peer, values));
        }
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
    /// 64 KiB or not UTF-8 counts as bad.
    ///
    /// # Errors
    ///
    /// Reading `input` failed.
    pub fn read(&mut self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let (mut number, mut bytes) = (0, 0);
        loop {
            buf.clear();
            let n = Read::take(&mut input, MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
            if n == 0 {
                if let Some(p) = &self.progress {
                    p.finish();
                }
                return Ok(());
            }
            number += 1;
            bytes += n as u64;
            if let Some(p) = self
                .progress
                .as_ref()
                .filter(|_| number % progress::EVERY == 0)
            {
                p.update(bytes, number);
            }
            if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
                // Too long: skip to its end.
                bytes += skip_line(&mut input)?;
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

/// Skips the rest of a line (its end included) in pieces of at most
/// 64 KiB: the bytes skipped, for the progress bar's count.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<u64> {
    let (mut skipped, mut rest) = (0, Vec::new());
    loop {
        let n = Read::take(&mut *input, 1 << 16).read_until(b'\n', &mut rest)?;
        skipped += n as u64;
        if n == 0 || rest.last() == Some(&b'\n') {
            return Ok(skipped);
        }
        rest.clear();
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
pub(crate) fn run(o: &crate::ReplayOptions, out: &mut dyn Write) -> i32 {
    let now_ms = crate::cli::now_or_clock(o.now);
    let file = o.file.display().to_string();
    let log = o.log.display().to_string();
    let loaded = crate::input::read_text(&o.file)
        .ok()
        .and_then(|t| RuleSet::from_json_at(&t, now_ms).ok());
    let Some(set) = loaded else {
        for d in crate::check::check_path(&o.file, &file, now_ms) {
            crate::write_ok(writeln!(out, "{d}"));
        }
        return 1;
    };
    let header = match o.forwarded_header {
        crate::Forwarded::Forwarded => ForwardedHeader::Forwarded,
        _ => ForwardedHeader::XForwardedFor,
    };
    let proxies = match o.hops {
        Some(n) => TrustedProxies::hops(n),
        None if o.trusted_proxies.is_empty() => TrustedProxies::none(),
        None => TrustedProxies::cidrs(o.trusted_proxies.iter().copied()),
    }
    .header(header);
    let mut replay = Replay::new(set, o.format)
        .time_unit(o.time_unit)
        .trusted_proxies(proxies);
    let read = std::fs::File::open(&o.log).and_then(|f| {
        let size = f.metadata().map_or(0, |m| m.len());
        replay.progress = progress::Progress::on_terminal(size);
        replay.read(std::io::BufReader::with_capacity(1 << 16, f))
    });
    if let Err(e) = read {
        crate::write_ok(writeln!(out, "{log}: error: {e}"));
        return 1;
    }
    crate::write_ok(output::text(out, &log, &replay.tally, o.top));
    if let Some(path) = &o.report {
        let page = report::html(&log, &replay.tally, o.top);
        if let Err(e) = std::fs::write(path, page) {
            crate::write_ok(writeln!(out, "{}: error: {e}", path.display()));
            return 1;
        }
    }
    let parsed = replay.tally.lines - replay.tally.bad;
    if parsed == 0 {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
