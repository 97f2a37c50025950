use super::*;
use http::header::COOKIE;
use http::HeaderValue;

fn request() -> http::request::Builder {
    Request::builder().extension(ClientIp("192.0.2.10".parse().unwrap()))
}

#[test]
fn method_host_path_and_query_are_copied() {
    let req = request()
        .method("POST")
        .uri("/login?user=a&user=b")
        .header("host", "Example.COM:8080")
        .body(())
        .unwrap();
    let a = RequestExtractor::new().extract(&req);
    assert_eq!(a.client_ip, "192.0.2.10".parse::<IpAddr>().unwrap());
    assert_eq!(a.method, "POST");
    assert_eq!(a.host, "example.com");
    assert_eq!(a.path, "/login");
    assert_eq!(a.query_arg("user").as_deref(), Some("a"));
}

#[test]
fn ipv6_hosts_lose_their_port_and_invalid_utf8_is_lossy() {
    let req = request()
        .header("host", "[2001:DB8::1]:443")
        .body(())
        .unwrap();
    assert_eq!(RequestExtractor::new().extract(&req).host, "2001:db8::1");
    let mut req = request().body(()).unwrap();
    let bad = HeaderValue::from_bytes(b"ex\xffample.com").unwrap();
    req.headers_mut().insert("host", bad);
    assert_eq!(
        RequestExtractor::new().extract(&req).host,
        "ex\u{fffd}ample.com"
    );
}

#[test]
fn the_first_value_of_each_header_and_every_cookie_line_are_kept() {
    let req = request()
        .header("x-tenant", "first")
        .header("x-tenant", "second")
        .header("cookie", "a=1")
        .header("cookie", "sid=s2")
        .body(())
        .unwrap();
    let a = RequestExtractor::new().extract(&req);
    assert_eq!(a.header("x-tenant"), Some(&b"first"[..]));
    assert_eq!(a.header_values("x-tenant").count(), 1);
    assert_eq!(a.cookie("sid"), Some(&b"s2"[..]));
}

#[test]
fn copies_are_bounded() {
    let mut req = request().body(()).unwrap();
    let big = HeaderValue::from_bytes(&vec![b'x'; 100_000]).unwrap();
    req.headers_mut().insert("x-big", big);
    for i in 0..5_000 {
        let name = HeaderName::from_bytes(format!("x-h{i}").as_bytes()).unwrap();
        req.headers_mut()
            .insert(name, HeaderValue::from_static("v"));
        req.headers_mut()
            .append(COOKIE, HeaderValue::from_str(&format!("c{i}=v")).unwrap());
    }
    let a = RequestExtractor::new().extract(&req);
    assert!(a.headers.len() <= MAX_HEADERS);
    let bytes: usize = a.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    assert!(bytes <= MAX_HEADER_BYTES, "{bytes}");
    assert_eq!(a.header("x-big").map(<[u8]>::len), Some(MAX_VALUE_BYTES));
}

#[test]
fn claims_and_app_values_come_from_extensions_only() {
    let req = request()
        .header("x-jwt-sub", "forged")
        .extension(AppValues::new([("tenant", "acme")]))
        .body(())
        .unwrap();
    let a = RequestExtractor::new().extract(&req);
    assert_eq!(a.jwt_claims, None);
    assert_eq!(a.app_value("tenant"), Some("acme"));
    let req = request()
        .extension(VerifiedClaims::new([("sub", "user-42")]))
        .body(())
        .unwrap();
    assert_eq!(
        RequestExtractor::new().extract(&req).jwt_claim("sub"),
        Some("user-42")
    );
}

#[test]
fn viewer_headers_are_off_unless_named_and_need_a_trusted_peer() {
    let req = request().header("cf-ipcountry", " FR ").body(()).unwrap();
    assert_eq!(RequestExtractor::new().extract(&req).country, None);
    let viewer = ViewerHeaders::new().country(HeaderName::from_static("cf-ipcountry"));
    let ex = RequestExtractor::new().viewer_headers(viewer.clone());
    assert_eq!(ex.extract(&req).country.as_deref(), Some("FR"));
    let proxies = TrustedProxies::cidrs(["10.0.0.0/8".parse().unwrap()]);
    let ex = ex.trusted_proxies(proxies);
    assert_eq!(
        ex.extract(&req).country,
        None,
        "the peer is no trusted proxy"
    );
}

#[cfg(feature = "axum")]
#[test]
fn the_peer_comes_from_axum_connect_info() {
    let addr: SocketAddr = "198.51.100.4:1234".parse().unwrap();
    let req = Request::builder()
        .extension(axum::extract::ConnectInfo(addr))
        .body(())
        .unwrap();
    assert_eq!(RequestExtractor::new().extract(&req).client_ip, addr.ip());
}

#[test]
fn the_peer_comes_from_a_socket_addr_or_is_unspecified() {
    let addr: SocketAddr = "198.51.100.4:1234".parse().unwrap();
    let req = Request::builder().extension(addr).body(()).unwrap();
    assert_eq!(RequestExtractor::new().extract(&req).client_ip, addr.ip());
    let req = Request::new(());
    assert_eq!(
        RequestExtractor::new().extract(&req).client_ip,
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    );
}

#[test]
fn cut_respects_character_boundaries() {
    assert_eq!(cut("héllo", 2), "h");
    assert_eq!(cut("héllo", 3), "hé");
    assert_eq!(cut("abc", 10), "abc");
}

#[test]
fn too_long_parts_are_refused_whole_by_try_extract() {
    let e = RequestExtractor::new().max_uri_bytes(8);
    let get = |uri: &str| request().uri(uri).body(()).unwrap();
    assert!(e.try_extract_only(&get("/1234567"), None).is_ok());
    assert_eq!(
        e.try_extract_only(&get("/12345678"), None).unwrap_err(),
        TooLarge::Uri
    );
    assert_eq!(
        e.try_extract_only(&get("/?123456789"), None).unwrap_err(),
        TooLarge::Uri
    );
    // extract() still cuts.
    assert_eq!(e.extract(&get("/12345678")).path, "/1234567");
    let mut req = get("/");
    let long = HeaderValue::from_bytes(&vec![b'x'; MAX_VALUE_BYTES + 1]).unwrap();
    req.headers_mut().insert("x-op", long);
    let only = ["x-op".to_owned()];
    assert_eq!(
        e.try_extract_only(&req, Some(&only)).unwrap_err(),
        TooLarge::Headers
    );
    // A header no rule reads is not looked at.
    assert!(e.try_extract_only(&req, Some(&[])).is_ok());
    assert_eq!(TooLarge::Uri.status(), http::StatusCode::URI_TOO_LONG);
}

#[test]
fn a_forwarding_line_that_is_not_utf8_keeps_what_the_proxy_appended() {
    let e = RequestExtractor::new().trusted_proxies(TrustedProxies::hops(1));
    let mut req = request().body(()).unwrap();
    let line = HeaderValue::from_bytes(b"\xff\"x, 203.0.113.50").unwrap();
    req.headers_mut().insert("x-forwarded-for", line);
    let ip: IpAddr = "203.0.113.50".parse().unwrap();
    assert_eq!(e.extract(&req).client_ip, ip);
}
