use super::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn the_bound_is_never_below_the_host(raw in proptest::collection::vec(any::<u8>(), 0..24)) {
        let mut headers = HeaderMap::new();
        if let Ok(value) = http::HeaderValue::from_bytes(&raw) {
            headers.insert(HOST, value);
        }
        prop_assert!(longest(None, &headers) >= host(None, &headers).len());
    }

    #[test]
    fn the_first_entry_look_finds_the_first_host(
        lines in proptest::collection::vec((0..4usize, 0..3u8), 0..8),
        removed in proptest::option::of(0..4usize),
    ) {
        // Hosts first, later, repeated; a name removed (the map then
        // moves its last entry into the hole).
        let names = [HOST, http::header::ACCEPT, http::header::COOKIE, http::header::USER_AGENT];
        let mut headers = HeaderMap::new();
        for (name, value) in lines {
            headers.append(names[name].clone(), HeaderValue::from(u16::from(value)));
        }
        if let Some(name) = removed {
            headers.remove(&names[name]);
        }
        prop_assert_eq!(host_header(&headers), headers.get(HOST));
    }

    #[test]
    fn the_one_pass_reading_agrees_with_the_general_one(raw in "[a-zA-Z0-9.:@ \\[\\]-]{0,12}") {
        if let Some(host) = usual(&raw) {
            prop_assert_eq!(host, slow(&raw));
        }
    }
}

#[test]
fn hosts_are_normalized() {
    let cases = [
        ("api.example.com", "api.example.com"),
        ("API.Example.COM.", "api.example.com"),
        ("api.example.com.:8443", "api.example.com"),
        ("api.example.com..", "api.example.com."),
        ("user@api.example.com:80", "api.example.com"),
        ("[2001:DB8::1]:443", "2001:db8::1"),
        ("", ""),
        (".", ""),
        ("[", "["),
        ("[2001:db8::1", "[2001:db8::1"),
        ("[]", ""),
        ("a@b@Host:", "host"),
        ("@", ""),
        (":", ""),
        ("host:8a", "host:8a"),
        ("a-b.c-d.example", "a-b.c-d.example"),
        ("a.b.", "a.b"),
        ("example.com:", "example.com"),
        ("  Ünï.example:1  ", "Ünï.example"),
    ];
    for (raw, want) in cases {
        assert_eq!(normalize(raw), want, "{raw:?}");
    }
    // The one-pass reading agrees wherever it answers.
    let more = [
        "127.0.0.1:8080",
        "a.b.:1",
        "a:1:2",
        "a:b",
        "::1",
        ":80",
        "a..:",
        "x-y",
    ];
    for raw in cases.iter().map(|(raw, _)| *raw).chain(more) {
        if let Some(host) = usual(raw) {
            assert_eq!(host, slow(raw), "{raw:?}");
        }
    }
}
