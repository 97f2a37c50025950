//! Tests of the borrowed request view (`view.rs`).

use super::*;
use crate::ClientIp;

fn request(host: &str) -> Request<()> {
    Request::builder()
        .uri("/login?user=ann")
        .header("host", host)
        .header("x-user", "ann")
        .extension(ClientIp("192.0.2.1".parse().unwrap()))
        .extension(AppValues::new([("tenant", "acme")]))
        .body(())
        .unwrap()
}

#[test]
fn path_query_headers_and_a_lower_case_host_are_borrowed() {
    let req = request("api.example.com:8443");
    let view = RequestExtractor::new().view(&req);
    assert_eq!(view.host(), "api.example.com");
    assert!(matches!(
        view.host.get(),
        Some(Cow::Borrowed("api.example.com"))
    ));
    assert!(std::ptr::eq(view.path(), req.uri().path()));
    assert!(std::ptr::eq(view.query(), req.uri().query().unwrap()));
    let header = view.header("x-user").unwrap();
    assert!(std::ptr::eq(header, req.headers()["x-user"].as_bytes()));
    let upper = request("API.example.com");
    let view = RequestExtractor::new().view(&upper);
    assert_eq!(view.host(), "api.example.com");
    assert!(matches!(view.host.get(), Some(Cow::Owned(_))));
}

#[test]
fn views_stay_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<HttpView<'static>>();
}

#[test]
fn claims_and_app_values_are_read_when_asked() {
    let mut claims = BTreeMap::new();
    claims.insert("sub".to_owned(), "u-1".to_owned());
    let mut req = request("example.com");
    req.extensions_mut().insert(VerifiedClaims(claims));
    let view = RequestExtractor::new().view(&req);
    assert_eq!(view.jwt_claim("sub"), Some("u-1"));
    assert_eq!(view.jwt_claim("other"), None);
    assert_eq!(view.app_value("tenant"), Some("acme"));
    let bare = Request::builder().body(()).unwrap();
    let view = RequestExtractor::new().view(&bare);
    assert_eq!(
        (view.jwt_claim("sub"), view.app_value("tenant")),
        (None, None)
    );
}

#[test]
fn key_extractor_values_come_before_app_values() {
    let req = request("example.com");
    let view = RequestExtractor::new().view(&req);
    assert_eq!(view.app_value("tenant"), Some("acme"));
    let derived = vec![("tenant".to_owned(), "derived".to_owned())];
    let mut view = view;
    view.set_derived(derived);
    assert_eq!(view.app_value("tenant"), Some("derived"));
    assert_eq!(view.app_value("other"), None);
}

#[test]
fn every_value_of_a_repeated_header_is_walked_in_order() {
    let mut req = request("example.com");
    req.headers_mut().append("cookie", "a=1".parse().unwrap());
    req.headers_mut().append("cookie", "sid=2".parse().unwrap());
    let view = RequestExtractor::new().view(&req);
    let mut seen = Vec::new();
    view.for_each_header_value("cookie", &mut |v| {
        seen.push(v.to_vec());
        ControlFlow::Continue(())
    });
    assert_eq!(seen, [b"a=1".to_vec(), b"sid=2".to_vec()]);
    assert_eq!(view.cookie("sid"), Some(&b"2"[..]));
}

#[test]
fn viewer_facts_are_cut_decoded_lossily_and_trimmed_when_read() {
    use crate::ViewerHeaders;
    // `é` across the 256-byte cut: its first byte alone is not UTF-8.
    let long = format!("{}é", "a".repeat(MAX_VIEWER_VALUE - 1));
    let mut req = request("example.com");
    let headers = req.headers_mut();
    headers.insert("x-country", HeaderValue::from_static(" FR "));
    headers.insert("x-asn", HeaderValue::from_bytes(b"AS\xff1").unwrap());
    headers.insert("x-ja4", HeaderValue::from_static("   "));
    headers.insert("x-locale", HeaderValue::from_str(&long).unwrap());
    let names = ViewerHeaders::new()
        .country(HeaderName::from_static("x-country"))
        .asnum(HeaderName::from_static("x-asn"))
        .ja4(HeaderName::from_static("x-ja4"))
        .locale(HeaderName::from_static("x-locale"));
    let extractor = RequestExtractor::new().viewer_headers(names);
    let view = extractor.view(&req);
    let cut = format!("{}\u{FFFD}", "a".repeat(MAX_VIEWER_VALUE - 1));
    // Read in both orders: a lossy read first must not change the others.
    for _ in 0..2 {
        assert_eq!(view.viewer(ViewerFact::Country), Some("FR"));
        assert_eq!(view.viewer(ViewerFact::Asnum), Some("AS\u{FFFD}1"));
        assert_eq!(view.viewer(ViewerFact::Ja4), None);
        assert_eq!(view.viewer(ViewerFact::Locale), Some(cut.as_str()));
    }
    let fresh = extractor.view(&req);
    assert_eq!(fresh.viewer(ViewerFact::Asnum), Some("AS\u{FFFD}1"));
    assert_eq!(fresh.viewer(ViewerFact::Country), Some("FR"));
    // Borrowed from the request while it is UTF-8.
    let country = fresh.viewer(ViewerFact::Country).unwrap();
    assert!(req.headers()["x-country"]
        .as_bytes()
        .as_ptr_range()
        .contains(&country.as_ptr()));
}
