use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn nets(list: &[&str]) -> TrustedProxies {
    TrustedProxies::cidrs(list.iter().map(|s| s.parse::<Cidr>().unwrap()))
}

#[test]
fn odd_nodes_parse_or_are_refused_without_panics() {
    let cases = [
        ("203.0.113.7", Some("203.0.113.7")),
        (" 203.0.113.7 ", Some("203.0.113.7")),
        ("203.0.113.7:8080", Some("203.0.113.7")),
        ("\"203.0.113.7\"", Some("203.0.113.7")),
        ("\"[2001:db8:cafe::17]:4711\"", Some("2001:db8:cafe::17")),
        ("[2001:db8::1]", Some("2001:db8::1")),
        ("2001:db8::1", Some("2001:db8::1")),
        ("203.0.113.7:_port", Some("203.0.113.7")),
        ("unknown", None),
        ("_hidden", None),
        ("_SEVKISEK", None),
        ("", None),
        ("\"", None),
        ("[", None),
        ("[]", None),
        ("[2001:db8::1", None),
        ("[2001:db8::1]x", None),
        ("[203.0.113.7]", None),
        ("203.0.113.7:", None),
        ("203.0.113.7:80:80", None),
        ("203.0.113.7:123456", None),
        ("203.0.113.7:_", None),
        ("999.1.1.1", None),
        ("::ffff:1.2.3.4:80", None),
        ("\u{fffd}\u{0}", None),
    ];
    for (node, want) in cases {
        assert_eq!(parse_node(node), want.map(ip), "{node:?}");
    }
}

#[test]
fn without_trusted_proxies_the_header_is_ignored() {
    let p = TrustedProxies::none();
    assert_eq!(p.client_ip(ip("192.0.2.1"), ["1.1.1.1"]), ip("192.0.2.1"));
}

#[test]
fn one_hop_takes_the_rightmost_entry() {
    let p = TrustedProxies::hops(1);
    let peer = ip("10.0.0.1");
    assert_eq!(
        p.client_ip(peer, ["6.6.6.6, 203.0.113.9"]),
        ip("203.0.113.9")
    );
    assert_eq!(
        p.client_ip(peer, ["6.6.6.6", "203.0.113.9"]),
        ip("203.0.113.9")
    );
    // No header: the peer itself.
    assert_eq!(p.client_ip(peer, []), peer);
    // Unreadable rightmost entry: the nearest known hop, the peer.
    assert_eq!(p.client_ip(peer, ["203.0.113.9, unknown"]), peer);
}

#[test]
fn two_hops_take_the_second_from_the_right() {
    let p = TrustedProxies::hops(2);
    let peer = ip("10.0.0.1");
    assert_eq!(
        p.client_ip(peer, ["6.6.6.6, 203.0.113.9, 10.0.0.7"]),
        ip("203.0.113.9")
    );
    // A chain shorter than expected: its leftmost entry.
    assert_eq!(p.client_ip(peer, ["203.0.113.9"]), ip("203.0.113.9"));
    // Unreadable client entry: the proxy that wrote it.
    assert_eq!(p.client_ip(peer, ["_obf, 10.0.0.7"]), ip("10.0.0.7"));
}

#[test]
fn cidrs_skip_trusted_entries_from_the_right() {
    let p = nets(&["10.0.0.0/8", "2001:db8:ffff::/48"]);
    let peer = ip("10.0.0.1");
    assert_eq!(
        p.client_ip(peer, ["6.6.6.6, 203.0.113.9, 10.1.1.1, 10.2.2.2"]),
        ip("203.0.113.9")
    );
    assert_eq!(
        p.client_ip(peer, ["2001:db8::5, 2001:db8:ffff::1"]),
        ip("2001:db8::5")
    );
    // All entries trusted: the farthest of them.
    assert_eq!(p.client_ip(peer, ["10.9.9.9, 10.1.1.1"]), ip("10.9.9.9"));
    // The peer is not a trusted proxy: the header is ignored.
    assert_eq!(
        p.client_ip(ip("192.0.2.1"), ["203.0.113.9"]),
        ip("192.0.2.1")
    );
    // IPv4-mapped peers count as IPv4.
    assert_eq!(
        p.client_ip(ip("::ffff:10.0.0.1"), ["203.0.113.9"]),
        ip("203.0.113.9")
    );
}

#[test]
fn forwarded_header_reads_for_parameters() {
    let p = TrustedProxies::hops(1).header(ForwardedHeader::Forwarded);
    let peer = ip("10.0.0.1");
    let line = r#"for=6.6.6.6;proto=http, For="[2001:db8:cafe::17]:4711";by=10.0.0.1"#;
    assert_eq!(p.client_ip(peer, [line]), ip("2001:db8:cafe::17"));
    assert_eq!(p.client_ip(peer, ["for=unknown"]), peer);
    assert_eq!(p.client_ip(peer, ["proto=https"]), peer);
    assert_eq!(
        p.client_ip(peer, [r#"for="a,b", for=192.0.2.60"#]),
        ip("192.0.2.60")
    );
    assert_eq!(p.client_ip(peer, [r#"for="192.0.2.60\"#]), peer);
}

#[test]
fn long_chains_are_bounded() {
    let p = nets(&["10.0.0.0/8"]);
    let mut line = String::from("203.0.113.9");
    for _ in 0..10_000 {
        line.push_str(", 10.0.0.1");
    }
    // Only the rightmost MAX_CHAIN entries are looked at, all trusted.
    assert_eq!(p.client_ip(ip("10.0.0.2"), [line.as_str()]), ip("10.0.0.1"));
}

/// Issue 15, item 1: a proxy appending to the client's `X-Forwarded-For`
/// (nginx's `$proxy_add_x_forwarded_for`) turned `"x` into `"x, 203.0.113.50`,
/// which the quoted-string parsing read as one unreadable entry: the client
/// was keyed as the proxy.
#[test]
fn a_client_quote_does_not_swallow_what_the_proxy_appended() {
    let peer = ip("127.0.0.1");
    let client = ip("203.0.113.50");
    for p in [nets(&["127.0.0.0/8"]), TrustedProxies::hops(1)] {
        assert_eq!(p.client_ip(peer, [r#""x, 203.0.113.50"#]), client);
        assert_eq!(p.client_ip(peer, [r#"a"b\, 203.0.113.50"#]), client);
        let fwd = p.clone().header(ForwardedHeader::Forwarded);
        assert_eq!(fwd.client_ip(peer, [r#"for="x, for=203.0.113.50"#]), client);
        assert_eq!(
            fwd.client_ip(peer, [r#"for="x\, for="203.0.113.50:80";proto=http"#]),
            client
        );
        assert_eq!(
            fwd.client_ip(peer, [r#"for=";x, for="[2001:db8::7]""#]),
            ip("2001:db8::7")
        );
    }
}

mod client_prefix {
    use super::*;
    use proptest::prelude::*;

    /// Bytes a client can write to the left of what the proxy appends.
    fn prefix() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just(",".to_owned()),
            Just(";".to_owned()),
            Just("=".to_owned()),
            Just(" ".to_owned()),
            Just("for=".to_owned()),
            Just("unknown".to_owned()),
            Just("_hidden".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(":".to_owned()),
            Just("127.0.0.9".to_owned()),
            Just("10.0.0.1".to_owned()),
            Just("2001:db8::1".to_owned()),
            "[ -~]{0,6}",
            "\\PC{0,3}",
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    /// A readable address the proxy writes, in one of its shapes.
    fn appended() -> impl Strategy<Value = (IpAddr, String, String)> {
        let v4 = any::<[u8; 4]>()
            .prop_filter("untrusted", |o| o[0] != 127)
            .prop_map(IpAddr::from);
        let v6 = any::<[u16; 8]>()
            .prop_filter("not mapped", |s| s[..6] != [0, 0, 0, 0, 0, 0xffff])
            .prop_map(IpAddr::from);
        (prop_oneof![v4, v6], 0u8..3, any::<u16>()).prop_map(|(addr, shape, port)| {
            let (xff, fwd) = match (addr, shape) {
                (IpAddr::V4(a), 0) => (a.to_string(), format!("for={a}")),
                (IpAddr::V4(a), _) => (format!("{a}:{port}"), format!("for=\"{a}:{port}\"")),
                (IpAddr::V6(a), 0) => (a.to_string(), format!("for=\"[{a}]\"")),
                (IpAddr::V6(a), 1) => (format!("[{a}]"), format!("For=\"[{a}]\";proto=https")),
                (IpAddr::V6(a), _) => (format!("[{a}]:{port}"), format!("for=\"[{a}]:{port}\"")),
            };
            (addr.to_canonical(), xff, fwd)
        })
    }

    proptest! {
        /// Whatever the client sent, on one line joined by the proxy or on
        /// lines of its own, the client is the address the proxy appended:
        /// never the proxy.
        #[test]
        fn the_client_never_becomes_the_proxy(
            lines in proptest::collection::vec(prefix(), 1..3),
            (addr, xff, fwd) in appended(),
            joined in any::<bool>(),
        ) {
            let peer = ip("127.0.0.1");
            for header in [ForwardedHeader::XForwardedFor, ForwardedHeader::Forwarded] {
                let tail = match header {
                    ForwardedHeader::XForwardedFor => &xff,
                    _ => &fwd,
                };
                let mut all = lines.clone();
                match (joined, all.last_mut()) {
                    (true, Some(last)) => *last = format!("{last}, {tail}"),
                    _ => all.push(tail.clone()),
                }
                let refs: Vec<&str> = all.iter().map(String::as_str).collect();
                for p in [nets(&["127.0.0.0/8"]), TrustedProxies::hops(1)] {
                    let got = p.header(header).client_ip(peer, refs.iter().copied());
                    prop_assert_eq!(got, addr, "{:?} {:?}", header, all);
                }
            }
        }
    }
}
