//! Random request data never panics the view, and the view refuses
//! exactly the requests whose headers the rules read exceed the bounds.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request};
use proptest::prelude::*;
use ratelimit_core::{RequestView, ViewerFact};
use ratelimit_tower::extract::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_VALUE_BYTES};
use ratelimit_tower::{
    Cidr, ClientIp, ForwardedHeader, HttpView, RequestExtractor, TooLarge, TrustedProxies,
    VerifiedClaims,
};

fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    // Visible bytes, space, tab and obs-text: what a HeaderValue accepts.
    prop::collection::vec(
        prop_oneof![
            0x20u8..0x7f,
            Just(b'\t'),
            0x80u8..=0xff,
            Just(b','),
            Just(b'"')
        ],
        0..200,
    )
}

fn proxies() -> impl Strategy<Value = TrustedProxies> {
    prop_oneof![
        Just(TrustedProxies::none()),
        (0usize..5).prop_map(TrustedProxies::hops),
        Just(TrustedProxies::cidrs([
            "127.0.0.0/8".parse::<Cidr>().unwrap(),
            "2001:db8::/32".parse::<Cidr>().unwrap(),
        ])),
    ]
}

/// Whether the headers named in `only` are within the bounds, counted
/// through the view: the first value of each, every `Cookie` line.
fn within_bounds(view: &HttpView<'_>, only: &[String]) -> bool {
    let mut values = Vec::new();
    for name in only {
        if name == "cookie" {
            view.for_each_header_value(name, &mut |v| {
                values.push((name.len(), v.len()));
                std::ops::ControlFlow::Continue(())
            });
        } else if let Some(v) = view.header(name) {
            values.push((name.len(), v.len()));
        }
    }
    let bytes: usize = values.iter().map(|(n, v)| n + v).sum();
    let longest = values.iter().map(|(_, v)| *v).max().unwrap_or(0);
    values.len() <= MAX_HEADERS && bytes <= MAX_HEADER_BYTES && longest <= MAX_VALUE_BYTES
}

/// Reads every field, as a rule set reading all of them would.
fn read_all(view: &HttpView<'_>, only: &[String]) {
    let _ = (
        view.client_ip(),
        view.method(),
        view.host(),
        view.path(),
        view.query(),
    );
    let _ = (
        view.jwt_claim("sub"),
        view.app_value("a"),
        view.cost(),
        view.cookie("sid"),
    );
    let _ = (view.query_arg("q"), view.viewer(ViewerFact::Country));
    for name in only {
        let _ = view.header(name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_view_never_panics_and_refuses_exactly_what_exceeds_the_bounds(
        xff in prop::collection::vec(header_bytes(), 0..4),
        others in prop::collection::vec(("[a-z][a-z0-9-]{0,20}", header_bytes()), 0..16),
        path in "/[a-zA-Z0-9%._~/-]{0,100}",
        query in "[a-zA-Z0-9%=&+]{0,100}",
        host in header_bytes(),
        proxies in proxies(),
        forwarded in any::<bool>(),
        peer_v6 in any::<bool>(),
        claims in any::<bool>(),
        many in 0usize..300,
        big in 0usize..3,
    ) {
        let header = if forwarded { ForwardedHeader::Forwarded } else { ForwardedHeader::XForwardedFor };
        let peer = if peer_v6 { "::ffff:127.0.0.1" } else { "127.0.0.1" };
        let uri = format!("{path}?{query}");
        let mut req = Request::builder()
            .uri(uri.as_str())
            .extension(ClientIp(peer.parse().unwrap()))
            .body(Bytes::new())
            .unwrap();
        if claims {
            req.extensions_mut().insert(VerifiedClaims::new([("sub", "x")]));
        }
        let h = req.headers_mut();
        if let Ok(v) = HeaderValue::from_bytes(&host) {
            h.insert("host", v);
        }
        for line in &xff {
            if let Ok(v) = HeaderValue::from_bytes(line) {
                h.append(header.name(), v);
            }
        }
        for (n, v) in &others {
            if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(n.as_bytes()), HeaderValue::from_bytes(v)) {
                h.append(n, v);
            }
        }
        for i in 0..many {
            h.append(HeaderName::from_bytes(format!("x-n{i}").as_bytes()).unwrap(), HeaderValue::from_static("v"));
        }
        h.insert("x-big", HeaderValue::from_bytes(&vec![b'b'; MAX_VALUE_BYTES + big - 1]).unwrap());
        let ex = RequestExtractor::new().trusted_proxies(proxies.header(header));
        let mut only: Vec<String> = h.keys().map(|k| k.as_str().to_owned()).collect();
        only.push("cookie".to_owned());
        only.sort();
        only.dedup();
        let whole = ex.view(&req);
        read_all(&whole, &only);
        prop_assert_eq!(whole.jwt_claim("sub").is_some(), claims);
        match ex.try_view(&req, &only) {
            Ok(view) => {
                prop_assert!(within_bounds(&view, &only));
                read_all(&view, &only);
            }
            Err(TooLarge::Headers) => prop_assert!(!within_bounds(&whole, &only)),
            Err(e) => prop_assert!(false, "{:?}: the path and query are short", e),
        }
    }
}
