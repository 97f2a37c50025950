//! The access-log parser: both formats, bad lines, and random text.

use super::*;
use crate::replay::parse_log_line as parse;
use crate::{LogFormat, TimeUnit};

#[test]
fn combined_with_and_without_agent() {
    let l = parse(
        r#"::1 - bob [01/Dec/2026:15:04:05 +0100] "GET /a HTTP/2.0" 200 5 "https://r/" "ua x""#,
        LogFormat::Combined,
        TimeUnit::S,
    )
    .unwrap();
    assert_eq!(l.ip, Some("::1".parse().unwrap()));
    assert_eq!(l.header("user-agent"), Some(&b"ua x"[..]));
    assert_eq!(l.header("referer"), Some(&b"https://r/"[..]));
    let l = parse(
        r#"192.0.2.1 - - [01/Dec/2026:15:04:05 +0000] "GET / HTTP/1.0" 404 0"#,
        LogFormat::Combined,
        TimeUnit::S,
    )
    .unwrap();
    assert_eq!((l.status, l.headers.len()), (404, 0));
}

#[test]
fn json_lines() {
    let l = parse(
        r#"{"ip": "192.0.2.9", "time": "2026-12-01T15:04:05.5Z", "method": "post", "path": "/login?a=1",
            "headers": {"X-User": "ann"}, "claims": {"sub": "u1"}, "app": {"username": "ann"}, "status": 401}"#,
        LogFormat::Json,
        TimeUnit::S,
    )
    .unwrap();
    assert_eq!(
        (&*l.method, &*l.path, &*l.query, l.status),
        ("POST", "/login", "a=1", 401)
    );
    assert_eq!(
        (
            l.header("x-user"),
            l.jwt_claim("sub"),
            l.app_value("username")
        ),
        (Some(&b"ann"[..]), Some("u1"), Some("ann"))
    );
    let l = parse(
        r#"{"ip": "192.0.2.9", "time": 1764601445.25, "path": "/"}"#,
        LogFormat::Json,
        TimeUnit::S,
    )
    .unwrap();
    assert_eq!(l.time_ms, 1_764_601_445_250);
}

#[test]
fn the_main_format_and_json_lines_carry_the_forwarded_field() {
    let main = r#"10.0.0.2 - - [01/Dec/2026:15:04:05 +0000] "POST /login HTTP/1.1" 401 5 "-" "curl/8.5" "203.0.113.7, 10.0.0.9""#;
    let l = parse(main, LogFormat::Combined, TimeUnit::S).unwrap();
    assert_eq!(
        l.header("x-forwarded-for"),
        Some(&b"203.0.113.7, 10.0.0.9"[..])
    );
    let none = main.replace(r#""203.0.113.7, 10.0.0.9""#, r#""-""#);
    let l = parse(&none, LogFormat::Combined, TimeUnit::S).unwrap();
    assert_eq!(l.header("x-forwarded-for"), None);
    let json =
        r#"{"ip": "10.0.0.2", "time": 1796119200, "path": "/", "forwarded_for": "203.0.113.7"}"#;
    let l = parse(json, LogFormat::Json, TimeUnit::S).unwrap();
    assert_eq!(l.header("x-forwarded-for"), Some(&b"203.0.113.7"[..]));
    let bad = json.replace(r#""203.0.113.7""#, "7");
    assert_eq!(
        parse(&bad, LogFormat::Json, TimeUnit::S).unwrap_err().0,
        "\"forwarded_for\" is not a string"
    );
}

#[test]
fn json_times_in_milliseconds_need_the_unit() {
    // The fuzzer's find: JavaScript's Date.now() read as seconds is the year 58,886.
    let line = r#"{"ip": "192.0.2.9", "time": 1796119200225, "path": "/"}"#;
    let e = parse(line, LogFormat::Json, TimeUnit::S).unwrap_err();
    assert!(e.0.contains("--time-unit ms"), "{e}");
    let l = parse(line, LogFormat::Json, TimeUnit::Ms).unwrap();
    assert_eq!(l.time_ms, 1_796_119_200_225);
    let quoted = line.replace("1796119200225", "\"1796119200225\"");
    assert!(parse(&quoted, LogFormat::Json, TimeUnit::S)
        .unwrap_err()
        .0
        .contains("--time-unit ms"));
    // Seconds read as milliseconds are 1970: accepted (a plausible time),
    // but a fraction of a second in ms is kept whole.
    let secs = r#"{"ip": "192.0.2.9", "time": 1796119200.5, "path": "/"}"#;
    assert_eq!(
        parse(secs, LogFormat::Json, TimeUnit::Ms).unwrap().time_ms,
        1_796_119_200
    );
    let late = r#"{"ip": "192.0.2.9", "time": "+10000-01-01T00:00:00Z", "path": "/"}"#;
    assert!(parse(late, LogFormat::Json, TimeUnit::S).is_err());
}

#[test]
fn bad_lines_say_why() {
    for (line, why) in [
        ("", "no client address"),
        (
            "nope - - [x] \"GET / HTTP/1.1\" 200 1",
            "the client address is not an IP",
        ),
        (
            "192.0.2.1 - - [01/Dec/2026:15:04:05] \"GET / HTTP/1.1\" 200 1",
            "the time is not dd/Mon/yyyy:hh:mm:ss +zzzz",
        ),
        (
            "192.0.2.1 - - [01/Dec/2026:15:04:05 +0000] \"\\x16\\x03\" 400 1",
            "the request is not 'METHOD /target PROTOCOL'",
        ),
        (
            "192.0.2.1 - - [01/Dec/2026:15:04:05 +0000] \"GET / HTTP/1.1\" x 1",
            "no status",
        ),
    ] {
        assert_eq!(
            parse(line, LogFormat::Combined, TimeUnit::S).unwrap_err().0,
            why,
            "{line}"
        );
    }
    assert_eq!(
        parse("[1]", LogFormat::Json, TimeUnit::S).unwrap_err().0,
        "not a JSON object"
    );
    assert_eq!(
        parse(
            r#"{"ip": "192.0.2.1", "time": -1, "path": "/"}"#,
            LogFormat::Json,
            TimeUnit::S
        )
        .unwrap_err()
        .0,
        crate::time::number_error(TimeUnit::S)
    );
    assert!(parse(&"a".repeat(MAX_LINE + 1), LogFormat::Combined, TimeUnit::S).is_err());
}

proptest::proptest! {
    #[test]
    fn any_text_parses_or_says_why(line in "\\PC{0,160}", json in proptest::bool::ANY) {
        let format = if json { LogFormat::Json } else { LogFormat::Combined };
        let _ = parse(&line, format, TimeUnit::S);
        let _ = parse(&line, format, TimeUnit::Ms);
    }

    #[test]
    fn mangled_lines_never_panic(cut in 0usize..120, junk in "\\PC{0,8}") {
        let line = r#"203.0.113.7 - - [01/Dec/2026:10:00:00 +0000] "POST /login?a=1 HTTP/1.1" 401 12 "-" "ua""#;
        let mut mangled: String = line.chars().take(cut).collect();
        mangled.push_str(&junk);
        mangled.extend(line.chars().skip(cut + 1));
        let _ = parse(&mangled, LogFormat::Combined, TimeUnit::S);
    }
}
