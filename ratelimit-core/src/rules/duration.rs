//! Durations like `"30s"`, `"1m"`, `"24h"`, `"1h30m"`, and RFC 3339 times.
//!
//! Hand-written on purpose: `humantime` and `jiff` accept more than the rule
//! format documents (`"5ms"`, `"1h 30m"`, RFC 3339 without offsets, ...);
//! DESIGN.md, "Hand-written mechanisms and why", gives the examples. The
//! errors are plain messages that [`super::RuleError`] wraps with the rule id
//! and field.

/// Parses a duration in whole seconds (`s`, `m`, `h`, `d` units, combinable,
/// such as `"1h30m"`) into milliseconds.
pub(crate) fn parse_duration_ms(s: &str) -> Result<u64, String> {
    strict_duration_ms(s).map_err(|e| match crate::suggest::duration(s) {
        Some(form) => format!(
            "{:?} is not a duration: use {form:?} (units s, m, h, d, without spaces)",
            s.trim()
        ),
        None => e,
    })
}

/// [`parse_duration_ms`] without the suggestion.
fn strict_duration_ms(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("must be a duration such as \"30s\", \"1m\" or \"24h\"".into());
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(format!("unknown unit {c:?}: use s, m, h or d")),
        };
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("{s:?} is not a duration such as \"30s\" or \"1m\""))?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| "is too long".to_owned())?;
    }
    if !digits.is_empty() {
        return Err(format!("{s:?} needs a unit (s, m, h or d)"));
    }
    total
        .checked_mul(1000)
        .ok_or_else(|| "is too long".to_owned())
}

/// Parses an RFC 3339 time (`2026-11-01T00:00:00Z`, offsets and fractions
/// allowed) into Unix milliseconds.
pub(crate) fn parse_rfc3339_ms(s: &str) -> Result<u64, String> {
    let err = || format!("{s:?} is not an RFC 3339 time such as \"2026-11-01T00:00:00Z\"");
    let b = s.as_bytes();
    if b.len() < 20 || !s.is_ascii() {
        return Err(err());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        s.get(r).and_then(|t| t.parse::<i64>().ok()).ok_or_else(err)
    };
    let sep_ok = b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !sep_ok {
        return Err(err());
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || min > 59
        || sec > 60
    {
        return Err(err());
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(err());
        }
        let frac = &s[start..i.min(start + 3)];
        millis = frac.parse::<i64>().map_err(|_| err())? * 10i64.pow(3 - frac.len() as u32);
    }
    let offset_s = match &s[i..] {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) && &tz[3..4] == ":" => {
            let h = num(i + 1..i + 3)?;
            let m = num(i + 4..i + 6)?;
            let sign = if tz.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return Err(err()),
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_s;
    u64::try_from(secs * 1000 + millis).map_err(|_| err())
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Latest time an RFC 3339 text can hold (9999-12-31T23:59:59.999Z), in
/// Unix ms.
pub(crate) const MAX_RFC3339_MS: u64 = 253_402_300_799_999;

/// Writes `ms` (whole seconds) the way [`parse_duration_ms`] reads it,
/// largest units first: `"30s"`, `"1m"`, `"1h30m"`, `"24h"`. A fraction of a
/// second (never in a validated rule) is dropped.
pub(crate) fn format_duration_ms(ms: u64) -> String {
    let secs = ms / 1000;
    if secs == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in [('h', 3600), ('m', 60), ('s', 1)] {
        let n = if unit == 'h' {
            secs / size
        } else {
            secs % (size * 60) / size
        };
        if n > 0 {
            out.push_str(&n.to_string());
            out.push(unit);
        }
    }
    out
}

/// Writes Unix `ms` the way [`parse_rfc3339_ms`] reads it, in UTC:
/// `2026-11-01T00:00:00Z`, with `.mmm` when there are milliseconds. Times
/// past [`MAX_RFC3339_MS`] are written as that time.
pub(crate) fn format_rfc3339_ms(ms: u64) -> String {
    let ms = ms.min(MAX_RFC3339_MS);
    let secs = (ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let frac = ms % 1000;
    if frac == 0 {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{frac:03}Z")
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
