use super::*;
use crate::{AppValues, VerifiedClaims};
use http::header::COOKIE;
use http::HeaderValue;
use ratelimit_core::{RequestView, ViewerFact};

fn request() -> http::request::Builder {
    Request::builder().extension(ClientIp("192.0.2.10".parse().unwrap()))
}

#[test]
fn method_host_path_and_query_are_read() {
    let req = request()
        .method("POST")
        .uri("/login?user=a&user=b")
        .header("host", "Example.COM:8080")
        .body(())
        .unwrap();
    let v = RequestExtractor::new().view(&req);
    assert_eq!(v.client_ip(), "192.0.2.10".parse::<IpAddr>().unwrap());
    assert_eq!(v.method(), "POST");
    assert_eq!(v.host(), "example.com");
    assert_eq!(v.path(), "/login");
    assert_eq!(v.query_arg("user").as_deref(), Some("a"));
}

#[test]
fn ipv6_hosts_lose_their_port_and_invalid_utf8_is_lossy() {
    let req = request()
        .header("host", "[2001:DB8::1]:443")
        .body(())
        .unwrap();
    assert_eq!(RequestExtractor::new().view(&req).host(), "2001:db8::1");
    let mut req = request().body(()).unwrap();
    let bad = HeaderValue::from_bytes(b"ex\xffample.com").unwrap();
    req.headers_mut().insert("host", bad);
    assert_eq!(
        RequestExtractor::new().view(&req).host(),
        "ex\u{fffd}ample.com"
    );
}

#[test]
fn the_first_value_of_a_header_and_a_cookie_on_any_line_are_read() {
    let req = request()
        .header("x-tenant", "first")
        .header("x-tenant", "second")
        .header("cookie", "a=1")
        .header("cookie", "sid=s2")
        .body(())
        .unwrap();
    let v = RequestExtractor::new().view(&req);
    assert_eq!(v.header("x-tenant"), Some(&b"first"[..]));
    assert_eq!(v.cookie("sid"), Some(&b"s2"[..]));
}

#[test]
fn headers_the_rules_read_beyond_the_bounds_are_refused() {
    let e = RequestExtractor::new();
    let mut req = request().body(()).unwrap();
    let big = HeaderValue::from_bytes(&vec![b'x'; MAX_VALUE_BYTES + 1]).unwrap();
    req.headers_mut().insert("x-big", big);
    let mut names = Vec::new();
    for i in 0..5_000 {
        let name = format!("x-h{i}");
        let header = HeaderName::from_bytes(name.as_bytes()).unwrap();
        req.headers_mut()
            .insert(header, HeaderValue::from_static("v"));
        req.headers_mut()
            .append(COOKIE, HeaderValue::from_str(&format!("c{i}=v")).unwrap());
        names.push(name);
    }
    let refused = |only: &[String]| e.try_view(&req, only).err();
    assert_eq!(refused(&["x-big".to_owned()]), Some(TooLarge::Headers));
    let most = names[..MAX_HEADERS].to_vec();
    assert_eq!(refused(&most), None, "{MAX_HEADERS} values fit");
    let one_more = names[..=MAX_HEADERS].to_vec();
    assert_eq!(refused(&one_more), Some(TooLarge::Headers));
    assert_eq!(refused(&["cookie".to_owned()]), Some(TooLarge::Headers));
    assert_eq!(refused(&["x-h1".to_owned()]), None);
}

#[test]
fn claims_and_app_values_come_from_extensions_only() {
    let req = request()
        .header("x-jwt-sub", "forged")
        .extension(AppValues::new([("tenant", "acme")]))
        .body(())
        .unwrap();
    let v = RequestExtractor::new().view(&req);
    assert_eq!(v.jwt_claim("sub"), None);
    assert_eq!(v.app_value("tenant"), Some("acme"));
    let req = request()
        .extension(VerifiedClaims::new([("sub", "user-42")]))
        .body(())
        .unwrap();
    assert_eq!(
        RequestExtractor::new().view(&req).jwt_claim("sub"),
        Some("user-42")
    );
}

#[test]
fn viewer_headers_are_off_unless_named_and_need_a_trusted_peer() {
    let req = request().header("cf-ipcountry", " FR ").body(()).unwrap();
    let country =
        |e: &RequestExtractor| e.view(&req).viewer(ViewerFact::Country).map(str::to_owned);
    assert_eq!(country(&RequestExtractor::new()), None);
    let viewer = ViewerHeaders::new().country(HeaderName::from_static("cf-ipcountry"));
    let ex = RequestExtractor::new().viewer_headers(viewer.clone());
    assert_eq!(country(&ex).as_deref(), Some("FR"));
    let proxies = TrustedProxies::cidrs(["10.0.0.0/8".parse().unwrap()]);
    let ex = ex.trusted_proxies(proxies);
    assert_eq!(country(&ex), None, "the peer is no trusted proxy");
}

#[cfg(feature = "axum")]
#[test]
fn the_peer_comes_from_axum_connect_info() {
    let addr: SocketAddr = "198.51.100.4:1234".parse().unwrap();
    let req = Request::builder()
        .extension(axum::extract::ConnectInfo(addr))
        .body(())
        .unwrap();
    assert_eq!(RequestExtractor::new().view(&req).client_ip(), addr.ip());
}

/// `ClientIp` (a middleware's answer) wins over axum's peer, whichever
/// lookup `find_peer` makes first: with the peer alone, one lookup.
#[cfg(feature = "axum")]
#[test]
fn client_ip_wins_over_axum_connect_info() {
    let addr: SocketAddr = "198.51.100.4:1234".parse().unwrap();
    let client: std::net::IpAddr = "203.0.113.9".parse().unwrap();
    let both = Request::builder()
        .extension(axum::extract::ConnectInfo(addr))
        .extension(crate::ClientIp(client))
        .body(())
        .unwrap();
    assert_eq!(find_peer(&both), Some(client));
    assert_eq!(RequestExtractor::new().view(&both).client_ip(), client);
    let alone = Request::builder()
        .extension(axum::extract::ConnectInfo(addr))
        .body(())
        .unwrap();
    assert_eq!(find_peer(&alone), Some(addr.ip()));
    let other = Request::builder()
        .extension(axum::extract::ConnectInfo(addr))
        .extension(7u32)
        .body(())
        .unwrap();
    assert_eq!(
        find_peer(&other),
        Some(addr.ip()),
        "another extension beside it"
    );
}

#[test]
fn the_peer_comes_from_a_socket_addr_or_is_unspecified() {
    let addr: SocketAddr = "198.51.100.4:1234".parse().unwrap();
    let req = Request::builder().extension(addr).body(()).unwrap();
    assert_eq!(RequestExtractor::new().view(&req).client_ip(), addr.ip());
    let req = Request::new(());
    assert_eq!(
        RequestExtractor::new().view(&req).client_ip(),
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    );
}

/// `ClientIp` wins over the server's address, and is found alone too; the
/// cost is read beside any of them (both views skip its lookup only when
/// the peer's address is the one extension), the same by the address view
/// and the full one.
#[test]
fn client_ip_wins_and_the_cost_is_read_beside_any_peer() {
    let (ours, server): (IpAddr, SocketAddr) = (
        "192.0.2.10".parse().unwrap(),
        "198.51.100.4:1234".parse().unwrap(),
    );
    let peer = |req: &Request<()>| {
        let found = find_peer(req);
        let view = RequestExtractor::new().try_address_at(req, found).unwrap();
        let full = RequestExtractor::new().view(req);
        let read = (view.client_ip(), view.cost());
        assert_eq!((full.client_ip(), full.cost()), read, "the full view");
        read
    };
    let alone = Request::builder()
        .extension(ClientIp(ours))
        .body(())
        .unwrap();
    assert_eq!(peer(&alone), (ours, None));
    let both = Request::builder()
        .extension(server)
        .extension(ClientIp(ours));
    assert_eq!(peer(&both.body(()).unwrap()), (ours, None));
    #[cfg(feature = "axum")]
    {
        let both = Request::builder()
            .extension(axum::extract::ConnectInfo(server))
            .extension(ClientIp(ours));
        assert_eq!(peer(&both.body(()).unwrap()), (ours, None));
        let costly = Request::builder()
            .extension(axum::extract::ConnectInfo(server))
            .extension(crate::Cost(7));
        assert_eq!(peer(&costly.body(()).unwrap()), (server.ip(), Some(7)));
    }
    let costly = Request::builder()
        .extension(server)
        .extension(crate::Cost(3));
    assert_eq!(peer(&costly.body(()).unwrap()), (server.ip(), Some(3)));
    let no_peer = Request::builder()
        .extension(crate::Cost(5))
        .body(())
        .unwrap();
    let unspecified = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    assert_eq!(peer(&no_peer), (unspecified, Some(5)));
    assert_eq!(peer(&Request::new(())), (unspecified, None));
}

/// The address view refuses exactly what the full view refuses: a path or
/// a query over the bound (measured apart only when the two together are
/// over it), a target's host (414) or a `Host` header (431) over it.
#[test]
fn the_address_view_has_the_full_views_bounds() {
    let e = RequestExtractor::new().max_uri_bytes(8);
    let long_host = "h".repeat(9);
    let cases = [
        ("/1234567", None),
        ("/12345678", None),
        ("/1234567?1234567", None),
        ("/1234567?12345678", None),
        ("/1234567?123456789", None),
        ("/12345678?1", None),
        ("/?12345678", None),
        ("http://abc.def/", None),
        ("http://abcd.efgh/", None),
        ("http://abc.def:443/1234567?1234567", None),
        ("/", Some("abc.def")),
        ("/", Some("abcd.efgh")),
        ("/", Some("abc.de.:80")),
        ("/", Some(long_host.as_str())),
    ];
    for (uri, host) in cases {
        let mut req = request().uri(uri);
        if let Some(host) = host {
            req = req.header("host", host);
        }
        let req = req.body(()).unwrap();
        let full = e.try_view(&req, &[]).err();
        let address = e.try_address_at(&req, find_peer(&req)).err();
        assert_eq!(address, full, "{uri} {host:?}");
    }
    let refused = |uri: &str| {
        let req = request().uri(uri).body(()).unwrap();
        e.try_address_at(&req, find_peer(&req))
    };
    assert!(refused("/1234567?1234567").is_ok());
    assert_eq!(refused("/1234567?123456789").unwrap_err(), TooLarge::Uri);
}

#[test]
fn too_long_parts_are_refused_whole_by_try_view() {
    let e = RequestExtractor::new().max_uri_bytes(8);
    let get = |uri: &str| request().uri(uri).body(()).unwrap();
    assert!(e.try_view(&get("/1234567"), &[]).is_ok());
    assert_eq!(
        e.try_view(&get("/12345678"), &[]).unwrap_err(),
        TooLarge::Uri
    );
    assert_eq!(
        e.try_view(&get("/?123456789"), &[]).unwrap_err(),
        TooLarge::Uri
    );
    // view() reads any request whole.
    assert_eq!(e.view(&get("/12345678")).path(), "/12345678");
    let mut req = get("/");
    let long = HeaderValue::from_bytes(&vec![b'x'; MAX_VALUE_BYTES + 1]).unwrap();
    req.headers_mut().insert("x-op", long);
    let only = ["x-op".to_owned()];
    assert_eq!(e.try_view(&req, &only).unwrap_err(), TooLarge::Headers);
    // A header no rule reads is not looked at.
    assert!(e.try_view(&req, &[]).is_ok());
    assert_eq!(TooLarge::Uri.status(), http::StatusCode::URI_TOO_LONG);
}

#[test]
fn a_forwarding_line_that_is_not_utf8_keeps_what_the_proxy_appended() {
    let e = RequestExtractor::new().trusted_proxies(TrustedProxies::hops(1));
    let mut req = request().body(()).unwrap();
    let line = HeaderValue::from_bytes(b"\xff\"x, 203.0.113.50").unwrap();
    req.headers_mut().insert("x-forwarded-for", line);
    let ip: IpAddr = "203.0.113.50".parse().unwrap();
    assert_eq!(e.view(&req).client_ip(), ip);
}

#[test]
fn a_bounded_view_reads_each_header_as_the_map_has_it() {
    // The view keeps the first values the bounds found for the first names
    // the rules read; every read must still be the map's first value,
    // whether kept or looked up (a name past the kept ones, cookies, a name
    // the rules do not read, an invalid one, an absent one).
    let req = request()
        .header("x-a", "1")
        .header("x-a", "2")
        .header("x-c", "3")
        .header("x-d", "4")
        .header(COOKIE, "s=1")
        .header("x-other", "5")
        .body(())
        .unwrap();
    let only: Vec<String> = ["x-a", "x-b", "cookie", "x-c", "x-d", "bad name"]
        .iter()
        .map(|n| (*n).to_owned())
        .collect();
    let e = RequestExtractor::new();
    let v = e.try_view(&req, &only).unwrap();
    for name in [
        "x-a", "x-b", "cookie", "x-c", "x-d", "bad name", "x-other", "x-none",
    ] {
        let want = req.headers().get(name).map(HeaderValue::as_bytes);
        assert_eq!(v.header(name), want, "{name}");
    }
    assert_eq!(v.header("x-a"), Some(&b"1"[..]));
    assert_eq!(v.header("x-b"), None);
}
