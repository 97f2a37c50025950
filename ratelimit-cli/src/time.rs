//! Times in access logs and on the command line, as Unix milliseconds.
//!
//! RFC 3339 (`2026-12-01T15:04:05.250Z`, an offset instead of `Z`),
//! nginx's `$time_local` (`01/Dec/2026:15:04:05 +0000`), and numbers
//! (Unix seconds, with a fraction, as nginx's `$msec` writes them).

/// Unix milliseconds of a proleptic Gregorian date and time (UTC).
fn unix_ms(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> Option<u64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((mo + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + i64::from(h * 3600 + mi * 60 + s);
    u64::try_from(secs)
        .ok()?
        .checked_mul(1000)?
        .checked_add(u64::from(ms))
}

fn num(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Applies a `+hh:mm`, `+hhmm`, `-…` or `Z` offset to a local time.
fn offset(ms: u64, off: &str) -> Option<u64> {
    if off == "Z" || off == "z" {
        return Some(ms);
    }
    let (sign, rest) = off.split_at_checked(1)?;
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mins = u64::from(num(&digits[..2])? * 60 + num(&digits[2..])?);
    match sign {
        "+" => ms.checked_sub(mins * 60_000),
        "-" => ms.checked_add(mins * 60_000),
        _ => None,
    }
}

/// The milliseconds of a fraction written after a decimal point.
fn fraction_ms(f: &str) -> Option<u32> {
    if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let three: String = f.chars().chain("000".chars()).take(3).collect();
    num(&three)
}

/// An RFC 3339 time.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::time::rfc3339_ms;
/// assert_eq!(rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500));
/// assert_eq!(rfc3339_ms("1970-01-01T01:00:00+01:00"), Some(0));
/// assert_eq!(rfc3339_ms("yesterday"), None);
/// ```
pub fn rfc3339_ms(s: &str) -> Option<u64> {
    let (date, rest) = (s.get(..10)?, s.get(11..)?);
    if !matches!(s.as_bytes().get(10), Some(b'T' | b't' | b' ')) || rest.len() < 9 {
        return None;
    }
    let mut d = date.split('-');
    let (y, mo, da) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let (h, mi, se) = (
        num(rest.get(..2)?)?,
        num(rest.get(3..5)?)?,
        num(rest.get(6..8)?)?,
    );
    if rest.get(2..3)? != ":" || rest.get(5..6)? != ":" {
        return None;
    }
    let mut tail = rest.get(8..)?;
    let mut ms = 0;
    if let Some(f) = tail.strip_prefix('.') {
        let end = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
        ms = fraction_ms(&f[..end])?;
        tail = &f[end..];
    }
    offset(unix_ms(i64::from(y), mo, da, h, mi, se, ms)?, tail)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// nginx's `$time_local`: `01/Dec/2026:15:04:05 +0000`.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::time::clf_ms;
/// assert_eq!(clf_ms("01/Jan/1970:00:00:02 +0000"), Some(2000));
/// assert_eq!(clf_ms("01/Foo/1970:00:00:02 +0000"), None);
/// ```
pub fn clf_ms(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 26 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return None;
    }
    let day = num(s.get(..2)?)?;
    let month = MONTHS.iter().position(|m| Some(*m) == s.get(3..6))? as u32 + 1;
    let year = num(s.get(7..11)?)?;
    let (h, mi, se) = (
        num(s.get(12..14)?)?,
        num(s.get(15..17)?)?,
        num(s.get(18..20)?)?,
    );
    if b[14] != b':' || b[17] != b':' {
        return None;
    }
    offset(
        unix_ms(i64::from(year), month, day, h, mi, se, 0)?,
        s.get(21..)?,
    )
}

/// Unix seconds, with an optional fraction (`1764601445.250`).
pub fn epoch_ms(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = whole
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| whole.parse().ok())
        .flatten()?;
    let ms = if frac.is_empty() {
        0
    } else {
        fraction_ms(frac)?
    };
    secs.checked_mul(1000)?.checked_add(u64::from(ms))
}

/// `ms` as RFC 3339 in UTC, to the millisecond.
///
/// # Examples
///
/// ```
/// use ratelimit_cli::time::format_ms;
/// assert_eq!(format_ms(1_764_601_445_250), "2025-12-01T15:04:05.250Z");
/// ```
pub fn format_ms(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_agree() {
        let t = rfc3339_ms("2026-12-01T15:04:05Z").unwrap();
        assert_eq!(clf_ms("01/Dec/2026:16:04:05 +0100"), Some(t));
        assert_eq!(epoch_ms(&format!("{}.000", t / 1000)), Some(t));
        assert_eq!(format_ms(t), "2026-12-01T15:04:05.000Z");
        assert_eq!(rfc3339_ms(&format_ms(t + 7)), Some(t + 7));
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
        ] {
            assert_eq!(rfc3339_ms(s), None, "{s}");
            assert_eq!(clf_ms(s), None, "{s}");
        }
        assert_eq!(epoch_ms("1.x"), None);
        // A 4-byte offset that is not 4 digits (found by the log parser's proptest).
        assert_eq!(clf_ms("01/Dec/2026:16:04:05 +🟣"), None);
        assert_eq!(rfc3339_ms("2026-12-01T15:04:05-🟣"), None);
    }
}
