//! Pasted nginx lines, errors that name the line, column and directive, and no panics.

use proptest::prelude::*;

mod support;

use ratelimit_nginx::{ConfigErrorKind, Delay, LogLevel, ZoneKind};
use support::*;

#[test]
fn the_nginx_documentation_lines_are_read_as_pasted() {
    let config = NginxConfig::parse(
        "# from nginx.org\n\
         limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\n\
         limit_conn_zone $binary_remote_addr zone=addr:10m;   # per address\n\
         limit_req zone=one burst=5 nodelay; limit_conn addr 1;\n\
         limit_req_status 429;\n\
         limit_conn_status 429;\n\
         limit_req_dry_run on;\n\
         limit_conn_dry_run off;\n\
         limit_req_log_level warn;\n\
         limit_conn_log_level notice;\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let one = config.zone("one").expect("one");
    assert_eq!(
        (one.size().bytes(), one.key().as_str()),
        (10 << 20, "$binary_remote_addr")
    );
    assert!(matches!(one.kind(), ZoneKind::Req(rate) if rate.milli_per_second() == 1000));
    assert_eq!(config.zone("addr").map(|z| z.kind()), Some(ZoneKind::Conn));
    let top = config.top();
    assert_eq!(
        (top.limit_req()[0].burst(), top.limit_req()[0].delay()),
        (5, Delay::Nodelay)
    );
    assert_eq!(
        (top.limit_conn()[0].zone(), top.limit_conn()[0].max()),
        ("addr", 1)
    );
    assert_eq!(
        (top.limit_req_status(), top.limit_conn_status()),
        (429, 429)
    );
    assert_eq!(
        (top.limit_req_dry_run(), top.limit_conn_dry_run()),
        (true, false)
    );
    assert_eq!(
        (top.limit_req_log_level(), top.limit_conn_log_level()),
        (LogLevel::Warn, LogLevel::Notice)
    );
}

#[test]
fn errors_name_the_line_column_and_directive() {
    // (text, (line, column), directive, kind, message)
    type Case = (
        &'static str,
        (u32, u32),
        &'static str,
        ConfigErrorKind,
        &'static str,
    );
    let cases: &[Case] = &[
        (
            "limit_req zone=one burst=-1;",
            (1, 20),
            "limit_req",
            ConfigErrorKind::InvalidValue,
            "invalid burst value \"burst=-1\"",
        ),
        (
            "\n\nlimit_req fast;",
            (3, 11),
            "limit_req",
            ConfigErrorKind::InvalidValue,
            "invalid parameter \"fast\"",
        ),
        (
            "limit_req burst=1;",
            (1, 1),
            "limit_req",
            ConfigErrorKind::Arguments,
            "must have \"zone\" parameter",
        ),
        (
            "limit_req_status 302;",
            (1, 18),
            "limit_req_status",
            ConfigErrorKind::InvalidValue,
            "value must be between 400 and 599, not 302",
        ),
        (
            "limit_conn_status abc;",
            (1, 19),
            "limit_conn_status",
            ConfigErrorKind::InvalidValue,
            "invalid number \"abc\"",
        ),
        (
            "limit_req_dry_run yes;",
            (1, 19),
            "limit_req_dry_run",
            ConfigErrorKind::InvalidValue,
            "invalid value \"yes\", it must be \"on\" or \"off\"",
        ),
        (
            "limit_req_log_level debug;",
            (1, 21),
            "limit_req_log_level",
            ConfigErrorKind::InvalidValue,
            "invalid value \"debug\", it must be \"info\", \"notice\", \"warn\" or \"error\"",
        ),
        (
            "limit_conn addr 0;",
            (1, 1),
            "limit_conn",
            ConfigErrorKind::InvalidValue,
            "invalid number of connections \"0\"",
        ),
        (
            "limit_conn addr x;",
            (1, 17),
            "limit_conn",
            ConfigErrorKind::InvalidValue,
            "invalid number of connections \"x\"",
        ),
        (
            "limit_conn addr;",
            (1, 1),
            "limit_conn",
            ConfigErrorKind::Arguments,
            "invalid number of arguments",
        ),
        (
            "limit_req_status 429;\nlimit_req_status 503;",
            (2, 1),
            "limit_req_status",
            ConfigErrorKind::Duplicate,
            "is duplicate",
        ),
        (
            "limit_req zone=a; limit_req zone=a burst=2;",
            (1, 19),
            "limit_req",
            ConfigErrorKind::Duplicate,
            "zone \"a\" is duplicate",
        ),
        (
            "limit_rate 10k;",
            (1, 1),
            "limit_rate",
            ConfigErrorKind::UnknownDirective,
            "unknown directive \"limit_rate\"",
        ),
        (
            "limit_req_zone $client_ip zone=a:1m rate=1r/s;",
            (1, 1),
            "limit_req_zone",
            ConfigErrorKind::NotAllowedHere,
            "is only allowed at the top level",
        ),
        (
            "location /x { limit_conn a 1; }",
            (1, 13),
            "location",
            ConfigErrorKind::NotAllowedHere,
            "blocks are not supported here; apply a level to each route (location) instead",
        ),
    ];
    for (text, (line, column), directive, kind, message) in cases {
        let err = Level::parse(text).expect_err(text);
        assert_eq!(
            (err.line(), err.column()),
            (Some(*line), Some(*column)),
            "{text}: {err}"
        );
        assert_eq!(err.directive(), Some(*directive), "{text}");
        assert_eq!((err.kind(), err.message()), (kind, *message), "{text}");
    }
}

#[test]
fn zone_directive_errors_name_the_offending_argument() {
    let cases: &[(&str, u32, ConfigErrorKind, &str)] = &[
        (
            "limit_req_zone $client_ip zone=one rate=1r/s;",
            27,
            ConfigErrorKind::InvalidValue,
            "invalid zone size \"zone=one\"",
        ),
        (
            "limit_req_zone $client_ip zone=one:10q rate=1r/s;",
            27,
            ConfigErrorKind::InvalidValue,
            "invalid zone size \"zone=one:10q\"",
        ),
        (
            "limit_req_zone $client_ip zone=one:1m rate=1r/h;",
            39,
            ConfigErrorKind::InvalidValue,
            "invalid rate \"rate=1r/h\"",
        ),
        (
            "limit_req_zone $client_ip zone=one:1m;",
            1,
            ConfigErrorKind::Arguments,
            "invalid number of arguments",
        ),
        (
            "limit_req_zone $client_ip zone=one:1m zone=two:1m;",
            1,
            ConfigErrorKind::Arguments,
            "must have \"rate\" parameter",
        ),
        (
            "limit_conn_zone $client_ip rate=1r/s;",
            28,
            ConfigErrorKind::InvalidValue,
            "invalid parameter \"rate=1r/s\"",
        ),
        (
            "limit_conn_zone $uri zone=c:1m;",
            17,
            ConfigErrorKind::UnknownVariable,
            "unknown variable \"$uri\" in key \"$uri\"",
        ),
        (
            "limit_req zone=nowhere;",
            1,
            ConfigErrorKind::UnknownZone,
            "unknown limit_req_zone \"nowhere\"",
        ),
    ];
    for (text, column, kind, message) in cases {
        let err = NginxConfig::parse(text).expect_err(text);
        assert_eq!(
            (err.line(), err.column()),
            (Some(1), Some(*column)),
            "{text}: {err}"
        );
        assert_eq!((err.kind(), err.message()), (kind, *message), "{text}");
    }
}

#[test]
fn a_level_sets_only_what_it_writes() {
    let level = Level::parse("limit_conn_dry_run on;").expect("level");
    assert!(level.limit_req().is_empty() && level.limit_conn().is_empty());
    assert_eq!(level.limit_req_status(), 503);
    assert!(level.limit_conn_dry_run());
    assert_eq!(Level::parse("").expect("empty"), Level::default());
}

proptest! {
    #[test]
    fn no_input_panics(text in "\\PC{0,200}") {
        let _ = NginxConfig::parse(&text);
        let _ = Level::parse(&text);
    }

    #[test]
    fn no_directive_shaped_input_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("limit_req".to_owned()), Just("limit_req_zone".to_owned()), Just("limit_conn".to_owned()),
                Just("limit_conn_zone".to_owned()), Just("zone=a:1m".to_owned()), Just("rate=1r/s".to_owned()),
                Just("burst=".to_owned()), Just("delay=9".to_owned()), Just("nodelay".to_owned()),
                Just(";".to_owned()), Just("{".to_owned()), Just("}".to_owned()), Just("\"".to_owned()),
                Just("$".to_owned()), Just("${".to_owned()), Just("#".to_owned()), Just("\n".to_owned()),
                "[a-z$_={}:0-9]{0,12}",
            ],
            0..24,
        )
    ) {
        let text = parts.join(" ");
        let _ = NginxConfig::parse(&text);
        let _ = Level::parse(&text);
    }
}
