//! Target `access_log`: the access-log reader and parser of
//! `ratelimit replay`, and the replay itself.

use std::io::Cursor;

use jiff::Timestamp;
use ratelimit_cli::{parse_log_line, LogFormat, Replay, TimeUnit};
use ratelimit_core::rules::RuleSet;

const RULES: &str = r#"[
  {"id": "per-ip", "expression": "true", "algorithm": "sliding_window", "limit": 3,
   "period": "1m", "key": ["ip"]},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"", "algorithm": "fixed_window",
   "limit": 1, "period": "1m", "key": ["ip", "header:user-agent"], "penalty": "1m"},
  {"id": "user", "expression": "starts_with(http.request.uri.path, \"/api/\")",
   "algorithm": "token_bucket", "limit": 2, "period": "1m", "burst": 2,
   "key": ["jwt_claim:sub"], "on_missing_key": "reject", "action": "log"},
  {"id": "paths", "expression": "true", "algorithm": "distinct", "distinct_of": "path",
   "limit": 3, "period": "1m", "key": ["ip"], "fail_mode": "closed"},
  {"id": "404s", "expression": "true", "algorithm": "fixed_window", "limit": 2, "period": "1m",
   "key": ["ip"], "count_statuses": ["404"]}
]"#;

/// Target `access_log`: the first byte picks the format (even: combined,
/// odd: JSON lines); the rest is the log. Each line is parsed on its own
/// in both units of JSON-lines times (a parsed line has a method and a
/// path starting with `/`; its time lies in 1970..=9999 and, written back
/// as RFC 3339 to the millisecond, reads back the same), then the whole
/// log is replayed (every line is counted once: replayed, or bad).
pub fn access_log(data: &[u8]) {
    let Some((&first, log)) = data.split_first() else {
        return;
    };
    let format = if first & 1 == 0 {
        LogFormat::Combined
    } else {
        LogFormat::Json
    };
    for line in String::from_utf8_lossy(log).lines() {
        for unit in [TimeUnit::S, TimeUnit::Ms] {
            if let Ok(l) = parse_log_line(line, format, unit) {
                assert!(
                    !l.method.is_empty() || format == LogFormat::Json,
                    "{line:?}"
                );
                assert!(l.path.starts_with('/'), "{line:?}");
                let t = i64::try_from(l.time_ms).expect("a log time fits in i64");
                let t = Timestamp::from_millisecond(t).expect("a log time is before 10000");
                let written = t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
                assert_eq!(
                    written.parse::<Timestamp>().ok(),
                    Some(t),
                    "{line:?}: {written}"
                );
            }
        }
    }
    let rules = RuleSet::from_json_at(RULES, super::T0_MS).expect("the target's rules load");
    let mut replay = Replay::new(rules, format);
    replay
        .read(Cursor::new(log))
        .expect("reading from memory never fails");
    let t = &replay.tally;
    assert!(t.bad <= t.lines);
    assert_eq!(t.outcomes.iter().sum::<u64>(), t.lines - t.bad);
    assert!(t.first_bad.len() as u64 <= t.bad.min(5));
}
