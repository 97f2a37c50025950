//! The access-log parser: both formats, bad lines, and random text.

use super::*;

#[test]
fn combined_with_and_without_agent() {
    let l = parse(
        r#"::1 - bob [01/Dec/2026:15:04:05 +0100] "GET /a HTTP/2.0" 200 5 "https://r/" "ua x""#,
        LogFormat::Combined,
    )
    .unwrap();
    assert_eq!(l.ip, Some("::1".parse().unwrap()));
    assert_eq!(l.header("user-agent"), Some(&b"ua x"[..]));
    assert_eq!(l.header("referer"), Some(&b"https://r/"[..]));
    let l = parse(
        r#"192.0.2.1 - - [01/Dec/2026:15:04:05 +0000] "GET / HTTP/1.0" 404 0"#,
        LogFormat::Combined,
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
    )
    .unwrap();
    assert_eq!(l.time_ms, 1_764_601_445_250);
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
            parse(line, LogFormat::Combined).unwrap_err().0,
            why,
            "{line}"
        );
    }
    assert_eq!(
        parse("[1]", LogFormat::Json).unwrap_err().0,
        "no \"ip\" string"
    );
    assert_eq!(
        parse(
            r#"{"ip": "192.0.2.1", "time": -1, "path": "/"}"#,
            LogFormat::Json
        )
        .unwrap_err()
        .0,
        "no \"time\" (RFC 3339 or Unix seconds)"
    );
    assert!(parse(&"a".repeat(MAX_LINE + 1), LogFormat::Combined).is_err());
}

proptest::proptest! {
    #[test]
    fn any_text_parses_or_says_why(line in "\\PC{0,160}", json in proptest::bool::ANY) {
        let format = if json { LogFormat::Json } else { LogFormat::Combined };
        let _ = parse(&line, format);
    }

    #[test]
    fn mangled_lines_never_panic(cut in 0usize..120, junk in "\\PC{0,8}") {
        let line = r#"203.0.113.7 - - [01/Dec/2026:10:00:00 +0000] "POST /login?a=1 HTTP/1.1" 401 12 "-" "ua""#;
        let mut mangled: String = line.chars().take(cut).collect();
        mangled.push_str(&junk);
        mangled.extend(line.chars().skip(cut + 1));
        let _ = parse(&mangled, LogFormat::Combined);
    }
}
