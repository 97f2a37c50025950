//! Target `access_log`: the access-log reader and parser of
//! `ratelimit replay`, and the replay itself.

use std::io::Cursor;

use ratelimit_cli::replay::log::{parse, LogFormat};
use ratelimit_cli::replay::Replay;
use ratelimit_cli::time::{format_ms, rfc3339_ms};
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
/// (a parsed line has a method and a path starting with `/`; its time
/// written back as RFC 3339 reads back the same), then the whole log is
/// replayed (every line is counted once: replayed, or bad).
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
        if let Ok(l) = parse(line, format) {
            assert!(
                !l.method.is_empty() || format == LogFormat::Json,
                "{line:?}"
            );
            assert!(l.path.starts_with('/'), "{line:?}");
            assert_eq!(
                rfc3339_ms(&format_ms(l.time_ms)),
                Some(l.time_ms),
                "{line:?}"
            );
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
