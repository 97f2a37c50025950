//! Times in access logs and on the command line, as Unix milliseconds,
//! read and written with `jiff` (UTC and fixed offsets only).
//!
//! RFC 3339 (`2026-12-01T15:04:05.250Z`, an offset instead of `Z`),
//! nginx's `$time_local` (`01/Dec/2026:15:04:05 +0000`), and numbers
//! (Unix seconds, with a fraction, as nginx's `$msec` writes them, or
//! Unix milliseconds). Every time is between 1970 and the end of the year
//! 9999: a number past that is almost always in the wrong unit.

use std::cell::Cell;

use jiff::fmt::strtime;
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::TimeUnit;

/// The latest log time: jiff's last timestamp in milliseconds
/// (`9999-12-30T22:00:00.000Z`, so that any offset within a day keeps it in
/// the year 9999).
pub(crate) const MAX_MS: u64 = 253_402_207_200_000;

/// A timestamp as Unix milliseconds, when it is between 1970 and 9999.
fn ms_of(t: Timestamp) -> Option<u64> {
    u64::try_from(t.as_millisecond())
        .ok()
        .filter(|ms| *ms <= MAX_MS)
}

/// An RFC 3339 time.
pub(crate) fn rfc3339_ms(s: &str) -> Option<u64> {
    // jiff reads more than RFC 3339 (`20261201T...`, time zone
    // annotations): the date and time separators are checked here.
    let b = s.as_bytes();
    if b.get(4) != Some(&b'-') || b.get(13) != Some(&b':') {
        return None;
    }
    ms_of(s.parse::<Timestamp>().ok()?)
}

/// nginx's `$time_local`: `01/Dec/2026:15:04:05 +0000`.
///
/// A log's consecutive lines mostly share their second: the last time read
/// on this thread is kept, and the same text is not parsed again.
pub(crate) fn clf_ms(s: &str) -> Option<u64> {
    thread_local! {
        static LAST: Cell<Option<([u8; 26], u64)>> = const { Cell::new(None) };
    }
    let bytes: [u8; 26] = s.as_bytes().try_into().ok()?;
    if let Some((text, ms)) = LAST.get() {
        if text == bytes {
            return Some(ms);
        }
    }
    let t = strtime::parse("%d/%b/%Y:%H:%M:%S %z", s).ok()?;
    let ms = ms_of(t.to_timestamp().ok()?)?;
    LAST.set(Some((bytes, ms)));
    Some(ms)
}

/// Why a number is not a log time.
pub(crate) fn number_error(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Ms => {
            "\"time\" is not Unix milliseconds between 1970 and 9999 (seconds? --time-unit s)"
        }
        _ => "\"time\" is past the year 9999 or before 1970 as Unix seconds (milliseconds? --time-unit ms)",
    }
}

/// A Unix time in `unit`, with an optional fraction (`1764601445.250`);
/// `None` past the year 9999.
pub(crate) fn epoch_ms(s: &str, unit: TimeUnit) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || (s.contains('.') && frac.is_empty()) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let three: String = frac.chars().chain("000".chars()).take(3).collect();
    let frac_ms: u64 = three.parse().ok()?;
    let ms = match unit {
        TimeUnit::Ms => whole,
        _ => whole.checked_mul(1000)?.checked_add(frac_ms)?,
    };
    (ms <= MAX_MS).then_some(ms)
}

/// `ms` as RFC 3339 in UTC, to the millisecond; times past 9999 are
/// written as its last millisecond (no log time is).
pub(crate) fn format_ms(ms: u64) -> String {
    let ms = i64::try_from(ms.min(MAX_MS)).unwrap_or(0);
    let t = Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH);
    let dt = t.to_zoned(TimeZone::UTC).datetime();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        dt.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_agree() {
        let t = rfc3339_ms("2026-12-01T15:04:05Z").unwrap();
        assert_eq!(clf_ms("01/Dec/2026:16:04:05 +0100"), Some(t));
        assert_eq!(epoch_ms(&format!("{}.000", t / 1000), TimeUnit::S), Some(t));
        assert_eq!(epoch_ms(&format!("{t}"), TimeUnit::Ms), Some(t));
        assert_eq!(format_ms(t), "2026-12-01T15:04:05.000Z");
        assert_eq!(rfc3339_ms(&format_ms(t + 7)), Some(t + 7));
        assert_eq!(rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(rfc3339_ms("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(clf_ms("01/Jan/1970:00:00:02 +0000"), Some(2000));
        // Again (the kept time), then another.
        assert_eq!(clf_ms("01/Jan/1970:00:00:02 +0000"), Some(2000));
        assert_eq!(clf_ms("01/Jan/1970:00:00:03 +0000"), Some(3000));
        assert_eq!(clf_ms("01/Jan/1970:00:00:0x +0000"), None);
        assert_eq!(format_ms(1_764_601_445_250), "2025-12-01T15:04:05.250Z");
    }

    #[test]
    fn milliseconds_read_as_seconds_are_past_9999() {
        // JavaScript's Date.now(), found by the fuzzer read as seconds.
        assert_eq!(epoch_ms("1796119200225", TimeUnit::S), None);
        assert_eq!(
            epoch_ms("1796119200225", TimeUnit::Ms),
            Some(1_796_119_200_225)
        );
        assert_eq!(epoch_ms("253402207200", TimeUnit::S), Some(MAX_MS));
        assert_eq!(epoch_ms("253402207200.001", TimeUnit::S), None);
        assert_eq!(rfc3339_ms("1969-12-31T23:59:59Z"), None);
        assert_eq!(format_ms(MAX_MS), "9999-12-30T22:00:00.000Z");
        assert!(Timestamp::from_millisecond(MAX_MS as i64 + 1).is_err());
    }

    #[test]
    fn garbage_is_none_never_a_panic() {
        for s in [
            "",
            "2026-13-01T00:00:00Z",
            "é",
            "01/Dec/2026:16:04:05 +01",
            "1.x",
            "2026-12-01Té",
            "yesterday",
            "01/Foo/1970:00:00:02 +0000",
        ] {
            assert_eq!(rfc3339_ms(s), None, "{s}");
            assert_eq!(clf_ms(s), None, "{s}");
        }
        assert_eq!(epoch_ms("1.x", TimeUnit::S), None);
        assert_eq!(epoch_ms("1.", TimeUnit::S), None);
        assert_eq!(epoch_ms("-1", TimeUnit::S), None);
        // A 4-byte offset that is not 4 digits (found by the log parser's proptest).
        assert_eq!(clf_ms("01/Dec/2026:16:04:05 +🟣"), None);
        assert_eq!(rfc3339_ms("2026-12-01T15:04:05-🟣"), None);
    }
}
