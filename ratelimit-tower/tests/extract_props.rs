//! Random request data never panics the extraction and stays bounded.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request};
use proptest::prelude::*;
use ratelimit_tower::extract::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_URI_PART};
use ratelimit_tower::{
    Cidr, ClientIp, ForwardedHeader, RequestExtractor, TrustedProxies, VerifiedClaims,
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn extraction_never_panics_and_is_bounded(
        xff in prop::collection::vec(header_bytes(), 0..4),
        others in prop::collection::vec(("[a-z][a-z0-9-]{0,20}", header_bytes()), 0..16),
        path in "/[a-zA-Z0-9%._~/-]{0,100}",
        query in "[a-zA-Z0-9%=&+]{0,100}",
        host in header_bytes(),
        proxies in proxies(),
        forwarded in any::<bool>(),
        peer_v6 in any::<bool>(),
        claims in any::<bool>(),
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
        let ex = RequestExtractor::new().trusted_proxies(proxies.header(header));
        let attrs = ex.extract(&req);
        prop_assert!(attrs.headers.len() <= MAX_HEADERS);
        let bytes: usize = attrs.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
        prop_assert!(bytes <= MAX_HEADER_BYTES);
        prop_assert!(attrs.path.len() <= MAX_URI_PART && attrs.query.len() <= MAX_URI_PART);
        prop_assert_eq!(attrs.jwt_claims.is_some(), claims);
    }
}
