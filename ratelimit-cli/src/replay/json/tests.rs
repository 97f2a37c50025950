//! The plain reader against serde_json's: the same line gives the same
//! request or the same reason, random lines included.

use proptest::prelude::*;

use super::reference::{old_parse, old_time};
use super::*;

/// Both readers give `line` the same answer in both units, and the plain
/// reader, when it reads the line, finds serde_json's field texts.
fn same_answer(line: &str) {
    if let Some(f) = scan::fields(line) {
        assert_eq!(read_fields(line), Ok(f), "{line}");
    }
    for unit in [TimeUnit::S, TimeUnit::Ms] {
        assert_eq!(parse(line, unit), old_parse(line, unit), "{line}");
    }
}

#[test]
fn a_loggers_lines_take_the_plain_path_and_others_serde_json() {
    for line in [
        r#"{"ip": "10.1.2.3", "time": 1796119200.123, "method": "GET", "path": "/api/items", "headers": {"user-agent": "Mozilla/5.0"}}"#,
        r#"{"ip":"::1","time":"2026-12-01T15:04:05Z","path":"/login?a=1","status":401,"forwarded_for":"203.0.113.7","claims":{"sub":"u1"},"app":{"n":"1"},"extra":[]}"#,
    ] {
        assert!(scan::fields(line).is_some() || line.contains('['), "{line}");
        same_answer(line);
    }
    for line in [
        r#"{"ip": "10.1.2.3", "time": 1, "path": "/\u0061"}"#,
        r#"{"ip": "10.1.2.3", "time": 1, "path": "/", "x": [1]}"#,
        r#"{"ip": "10.1.2.3", "ip": "10.1.2.4", "time": 1, "path": "/"}"#,
        r#"{"ip": "10.1.2.3", "time": 1, "path": "/"} x"#,
        r#"{"ip": "10.1.2.3", "time": 01, "path": "/"}"#,
    ] {
        assert_eq!(scan::fields(line), None, "{line}");
        same_answer(line);
    }
    let plain = r#"{"ip": "10.1.2.3", "time": 1796119200.123, "method": "GET", "path": "/", "headers": {"user-agent": "Mozilla/5.0"}}"#;
    assert!(scan::fields(plain).is_some());
}

#[test]
fn decimal_times_are_serde_jsons_floats() {
    // Near a millisecond's edge: the float, not the digits, decides.
    for t in [
        "1796119200.123",
        "0.001",
        "1.005",
        "4503599627.370495",
        "123456789012.345",
    ] {
        assert_eq!(
            time(Some(t), TimeUnit::S),
            old_time(Some(t), TimeUnit::S),
            "{t}"
        );
    }
}

/// JSON texts of one value: plain and escaped strings, numbers of every
/// shape, literals, objects and arrays.
fn value() -> impl Strategy<Value = String> {
    let json = |s: String| serde_json::to_string(&s).unwrap_or_default();
    let scalar = prop_oneof![
        any::<String>().prop_map(json),
        "[ -~]{0,12}".prop_map(json),
        prop::sample::select(vec![
            "\"10.1.2.3\"",
            "\"::1\"",
            "\"/login?a=1\"",
            "\"/api/x\"",
            "\"post\"",
            "\"Ex.COM\"",
            "\"2026-12-01T15:04:05.250Z\"",
            "\"1796119200\"",
            "\"1796119200225\"",
            "\"-1\"",
            "\"\"",
            "\"a\\u0062\"",
            "\"\\/x\"",
            "true",
            "false",
            "null",
            "0",
            "-0",
            "0.0",
            "1e3",
            "1.5E+2",
            "-1.25",
            "1796119200.999",
            "253402207200.001",
            "99999999999999999999",
            "1.8e308",
            "01",
            "1.",
            "\"\\ud800\"",
        ])
        .prop_map(str::to_owned),
        any::<u64>().prop_map(|n| n.to_string()),
        (0u64..1 << 41).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0u64..1 << 40, any::<u64>(), 1u32..17).prop_map(|(w, f, k)| format!(
            "{w}.{:0k$}",
            f % 10u64.pow(k),
            k = k as usize
        )),
        any::<f64>().prop_map(|f| f.to_string()),
    ];
    scalar.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec((key(), inner.clone()), 0..4).prop_map(|kv| object(&kv, " ")),
            prop::collection::vec(inner, 0..3).prop_map(|v| format!("[{}]", v.join(","))),
        ]
    })
}

/// A key's JSON text: the fields read, others, one escaped.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "ip",
        "time",
        "method",
        "path",
        "query",
        "host",
        "status",
        "forwarded_for",
        "headers",
        "claims",
        "app",
        "x",
        "IP",
        "User-Agent",
        "sub",
        "\\u0069p",
    ])
    .prop_map(|k| format!("\"{k}\""))
}

fn object(kv: &[(String, String)], ws: &str) -> String {
    let pairs: Vec<String> = kv.iter().map(|(k, v)| format!("{k}:{ws}{v}")).collect();
    format!("{{{}}}", pairs.join(&format!(",{ws}")))
}

/// A field as a logger writes it, mostly well-formed.
fn field() -> impl Strategy<Value = (String, String)> {
    let words = "[a-zA-Z0-9 ./=-]{0,10}";
    // Mostly plain strings; some with escapes (serde_json's own, or `\u`).
    let plain = move || {
        prop_oneof![
            4 => words.prop_map(|w| format!("\"{w}\"")),
            1 => "[a-zA-Z\"\\\\\t/é]{0,6}".prop_map(|w| serde_json::to_string(&w).unwrap_or_default()),
            1 => prop::sample::select(vec!["\"\\u0061b\"", "\"\\/\"", "\"A\\u00e9\""]).prop_map(str::to_owned),
        ]
    };
    let pairs = move || {
        prop::collection::vec((words, plain()), 0..3).prop_map(|kv| {
            let kv: Vec<_> = kv
                .into_iter()
                .map(|(k, v)| (format!("\"{k}\""), v))
                .collect();
            object(&kv, " ")
        })
    };
    let named = |k: &str, v: BoxedStrategy<String>| {
        v.prop_map({
            let k = format!("\"{k}\"");
            move |v| (k.clone(), v)
        })
    };
    prop_oneof![
        3 => named("method", prop::sample::select(vec!["\"GET\"", "\"post\"", "\"Put\""]).prop_map(str::to_owned).boxed()),
        2 => named("query", plain().boxed()),
        2 => named("host", plain().boxed()),
        2 => named("status", (0u32..70000).prop_map(|n| n.to_string()).boxed()),
        3 => named("headers", pairs().boxed()),
        2 => named("claims", pairs().boxed()),
        2 => named("app", pairs().boxed()),
        2 => named("forwarded_for", plain().boxed()),
        3 => (key(), value()),
    ]
}

/// A line as a logger writes it (`ip`, `time`, `path` and a few more
/// fields, in any order), with white space, and now and then cut short,
/// missing a colon or given a stray byte.
fn line() -> impl Strategy<Value = String> {
    let ip = prop::sample::select(vec![
        "\"10.1.2.3\"",
        "\"2001:db8::1\"",
        "\"192.0.2.9\"",
        "\"10.1.2.\\u0033\"",
        "\"x\"",
        "7",
    ]);
    let time = prop_oneof![
        3 => (0u64..1 << 34, 0u64..1000).prop_map(|(s, ms)| format!("{s}.{ms:03}")),
        1 => (0u64..1 << 45).prop_map(|n| n.to_string()),
        1 => Just("\"2026-12-01T15:04:05.250Z\"".to_owned()),
        1 => value(),
    ];
    let path = prop::sample::select(vec![
        "\"/\"",
        "\"/login?a=1\"",
        "\"/api/x\"",
        "\"/\\u0061?b=\\\"\"",
        "\"x\"",
        "null",
    ]);
    let extra = prop::collection::vec(field(), 0..5);
    let ws = prop::sample::select(vec!["", " ", "\t", " \r "]);
    let tail = prop::sample::select(vec!["", "", "", "", "", "", " ", "x", ",", "}"]);
    (
        ip,
        time,
        path,
        extra,
        ws,
        tail,
        any::<prop::sample::Index>(),
        any::<u8>(),
    )
        .prop_flat_map(|(ip, time, path, mut kv, ws, tail, cut, junk)| {
            kv.extend([
                ("\"ip\"".into(), ip.into()),
                ("\"time\"".into(), time),
                ("\"path\"".into(), path.into()),
            ]);
            (Just(kv).prop_shuffle(), Just((ws, tail, cut, junk)))
        })
        .prop_map(|(mut kv, (ws, tail, cut, junk))| {
            if junk % 16 != 2 {
                // A field named twice now and then only (serde_json refuses it).
                let mut seen = std::collections::HashSet::new();
                kv.retain(|(k, _)| seen.insert(k.clone()));
            }
            let line = format!("{ws}{}{tail}", object(&kv, ws));
            match junk % 16 {
                0 => line
                    .chars()
                    .take(cut.index(line.chars().count() + 1))
                    .collect(),
                1 => line.replacen(':', "", 1),
                3..=5 => {
                    // A stray byte anywhere: a control character, an
                    // escape, a quote.
                    let at = cut.index(line.chars().count() + 1);
                    let stray = ["\u{1}", "\\", "\""][usize::from(junk % 16 - 3)];
                    let (head, rest): (String, String) = (
                        line.chars().take(at).collect(),
                        line.chars().skip(at).collect(),
                    );
                    format!("{head}{stray}{rest}")
                }
                _ => line,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn generated_lines_read_as_serde_json_reads_them(line in line()) {
        same_answer(&line);
    }

    #[test]
    fn any_value_as_a_time_reads_as_serde_json_reads_it(raw in value()) {
        for unit in [TimeUnit::S, TimeUnit::Ms] {
            if serde_json::from_str::<serde_json::Value>(&raw).is_ok() {
                prop_assert_eq!(time(Some(&raw), unit), old_time(Some(&raw), unit), "{}", raw);
            }
        }
    }
}
