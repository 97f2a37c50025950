//! Durations and RFC 3339 times: parsed, refused with the units named, and
//! printed back in the form they parse.

use super::*;

#[test]
fn durations_parse_in_whole_seconds() {
    assert_eq!(parse_duration_ms("30s"), Ok(30_000));
    assert_eq!(parse_duration_ms("1m"), Ok(60_000));
    assert_eq!(parse_duration_ms("24h"), Ok(86_400_000));
    assert_eq!(parse_duration_ms("1h30m"), Ok(5_400_000));
    assert!(parse_duration_ms("").is_err());
    assert!(parse_duration_ms("10").is_err());
    assert!(parse_duration_ms("1.5m").is_err());
    assert!(parse_duration_ms("5ms").is_err());
    assert!(parse_duration_ms("99999999999999999999h").is_err());
    assert_eq!(parse_duration_ms("1d"), Ok(86_400_000));
}

#[test]
fn duration_errors_name_every_unit() {
    assert_eq!(
        parse_duration_ms("5y"),
        Err("unknown unit 'y': use s, m, h or d".into())
    );
    assert_eq!(
        parse_duration_ms("5w"),
        Err("\"5w\" is not a duration: use \"35d\" (units s, m, h, d, without spaces)".into())
    );
    assert_eq!(
        parse_duration_ms(" 1 minute"),
        Err("\"1 minute\" is not a duration: use \"1m\" (units s, m, h, d, without spaces)".into())
    );
    assert_eq!(
        parse_duration_ms("90"),
        Err("\"90\" needs a unit (s, m, h or d)".into())
    );
}

#[test]
fn rfc3339_times_parse_to_unix_ms() {
    assert_eq!(
        parse_rfc3339_ms("2026-01-01T00:00:00Z"),
        Ok(1_767_225_600_000)
    );
    assert_eq!(
        parse_rfc3339_ms("2026-01-01T01:00:00+01:00"),
        Ok(1_767_225_600_000)
    );
    assert_eq!(
        parse_rfc3339_ms("2026-01-01T00:00:00.25Z"),
        Ok(1_767_225_600_250)
    );
    assert!(parse_rfc3339_ms("2026-02-30T00:00:00Z").is_err());
    assert!(parse_rfc3339_ms("2026-01-01").is_err());
    assert!(parse_rfc3339_ms("2026-01-01T00:00:00").is_err());
    assert!(parse_rfc3339_ms("2026-01-01T00:00:00.Z").is_err());
    assert!(parse_rfc3339_ms("1969-12-31T23:59:59Z").is_err());
    assert!(parse_rfc3339_ms("２026-01-01T00:00:00Z").is_err());
}

#[test]
fn durations_print_back_in_the_form_they_parse() {
    for (ms, text) in [
        (1000, "1s"),
        (60_000, "1m"),
        (90_000, "1m30s"),
        (5_400_000, "1h30m"),
        (3_661_000, "1h1m1s"),
        (86_400_000, "24h"),
    ] {
        assert_eq!(format_duration_ms(ms), text);
        assert_eq!(parse_duration_ms(text), Ok(ms));
    }
    for secs in 1..=86_400u64 {
        let ms = secs * 1000;
        assert_eq!(parse_duration_ms(&format_duration_ms(ms)), Ok(ms), "{ms}");
    }
}

#[test]
fn times_print_back_in_the_form_they_parse() {
    assert_eq!(format_rfc3339_ms(1_767_225_600_000), "2026-01-01T00:00:00Z");
    assert_eq!(
        format_rfc3339_ms(1_767_225_600_250),
        "2026-01-01T00:00:00.250Z"
    );
    assert_eq!(
        format_rfc3339_ms(MAX_RFC3339_MS),
        "9999-12-31T23:59:59.999Z"
    );
    let mut ms = 0u64;
    while ms <= MAX_RFC3339_MS {
        assert_eq!(parse_rfc3339_ms(&format_rfc3339_ms(ms)), Ok(ms), "{ms}");
        ms += 7_654_321_987; // about every 88 days, odd hours and ms
    }
    assert_eq!(
        parse_rfc3339_ms(&format_rfc3339_ms(MAX_RFC3339_MS)),
        Ok(MAX_RFC3339_MS)
    );
}
