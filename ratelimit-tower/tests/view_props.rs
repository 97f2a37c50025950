//! The borrowed view the layer checks ([`HttpView`]) and the core's owned
//! `RequestAttrs` copied from it (`ratelimit_testkit::owned`) read alike:
//! the same header values, cookies, query arguments, expression results,
//! keys and verdicts, over hostile hosts, repeated headers and cookies,
//! forwarding chains, viewer headers, claims, application values and
//! costs.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request};
use proptest::prelude::*;
use ratelimit_core::backend::subject;
use ratelimit_core::rules::{Rule, RuleSet};
use ratelimit_core::{
    Expression, HashKey, Limiter, ManualClock, RequestAttrs, RequestView, ViewerFact,
};
use ratelimit_testkit::owned::{owned_attrs, Reads};
use ratelimit_tower::{
    AppValues, Cidr, ClientIp, Cost, ForwardedHeader, HttpView, RequestExtractor, TrustedProxies,
    VerifiedClaims, ViewerHeaders,
};

/// Every field a rule can read, in expressions.
const EXPRESSIONS: &[&str] = &[
    r#"http.request.uri.path eq "/login""#,
    r#"http.request.uri.path contains "a""#,
    r#"http.request.uri.query contains "q=""#,
    r#"http.request.method in {"GET" "POST"}"#,
    r#"http.host eq "api.example.com""#,
    r#"http.host matches "example\\.com$""#,
    r#"http.user_agent contains "bot""#,
    r#"http.request.headers["x-a"] eq "1""#,
    r#"lower(http.request.headers["x-b"]) contains "ab""#,
    r#"http.cookie contains "sid=""#,
    r#"http.cookie eq "sid=1; a=2""#,
    r#"ip.src in { 10.0.0.0/8 2001:db8::/32 }"#,
    r#"http.request.jwt.claims["sub"] eq "u1""#,
    r#"app.tenant eq "acme""#,
];

/// Every key part.
const KEYS: &[&[&str]] = &[
    &["ip"],
    &["ip", "header:x-a"],
    &["ip", "header:user-agent"],
    &["ip", "cookie:sid"],
    &["ip", "query:q"],
    &["ip", "host"],
    &["ip", "method"],
    &["ip", "country"],
    &["ip", "asnum"],
    &["ip", "ja4"],
    &["ip", "locale"],
    &["ip", "app:tenant"],
    &["jwt_claim:sub"],
];

/// A rule set for whole checks: expressions, keys, allow lists, `distinct`
/// and costs, small limits so that repeats get refused.
const RULES: &str = r#"[
  {"id": "site", "expression": "true", "algorithm": "fixed_window", "limit": 3,
   "period": "1m", "key": ["ip"], "ratelimit_headers": true},
  {"id": "login", "expression": "http.request.uri.path contains \"a\"",
   "algorithm": "leaky_bucket", "limit": 2, "burst": 2, "period": "1m", "key": ["ip", "header:x-a"],
   "on_missing_key": "skip", "allow": {"ips": ["10.0.0.0/8"], "values": {"cookie:sid": ["1"]}}},
  {"id": "query", "expression": "http.request.uri.query contains \"q\"",
   "algorithm": "sliding_window", "limit": 2, "period": "1m", "key": ["ip", "query:q"],
   "on_missing_key": "reject"},
  {"id": "paths", "expression": "http.host eq \"api.example.com\"", "algorithm": "distinct",
   "distinct_of": "path", "limit": 2, "period": "1m", "key": ["ip"]},
  {"id": "viewer", "expression": "app.tenant ne \"\"", "algorithm": "token_bucket",
   "limit": 2, "burst": 2, "period": "1m", "key": ["ip", "country", "app:tenant"],
   "on_missing_key": "fallback_ip", "allow": {"values": {"asnum": ["64500"], "ja4": ["t13"]}}},
  {"id": "claims", "expression": "http.request.jwt.claims[\"sub\"] ne \"\" or http.cookie contains \"x\"",
   "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["jwt_claim:sub"],
   "on_missing_key": "fallback_ip", "action": "log"}
]"#;

fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(
            prop_oneof![0x20u8..0x7f, Just(b'\t'), 0x80u8..=0xff, Just(b';'), Just(b'=')],
            0..24,
        ),
        2 => prop::sample::select(vec![
            b"1".to_vec(), b"sid=1; a=2".to_vec(), b" sid = 2 ".to_vec(), b"AB".to_vec(),
            b"bot/1.0".to_vec(), b"FR".to_vec(), b" 64500 ".to_vec(), b"t13".to_vec(),
            b"10.0.0.9, 203.0.113.5".to_vec(), b"for=192.0.2.60;proto=http".to_vec(),
        ]),
        1 => (1usize..3).prop_map(|n| vec![b'v'; n * 5_000]),
    ]
}

fn host() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            b"api.example.com".to_vec(),
            b"API.Example.COM.:8443".to_vec(),
            b"api.example.com..".to_vec(),
            b"[2001:DB8::1]:443".to_vec(),
            b"user@api.example.com:80".to_vec(),
            b"ex\xffample.com".to_vec(),
            b" localhost:3000 ".to_vec(),
            b"".to_vec(),
        ]),
        header_bytes(),
    ]
}

fn header_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "x-a",
        "X-A",
        "x-b",
        "user-agent",
        "cookie",
        "Cookie",
        "x-forwarded-for",
        "forwarded",
        "cf-ipcountry",
        "x-asn",
        "x-ja4",
        "accept-language",
        "x-other",
    ])
}

#[derive(Debug, Clone)]
struct Input {
    method: &'static str,
    absolute: bool,
    host: Vec<u8>,
    path: String,
    query: String,
    headers: Vec<(&'static str, Vec<u8>)>,
    peer: IpAddr,
    proxies: u8,
    viewer: bool,
    max_uri: usize,
    claims: Option<&'static str>,
    app: Option<&'static str>,
    cost: Option<u64>,
}

fn input() -> impl Strategy<Value = Input> {
    (
        (
            prop::sample::select(vec!["GET", "POST", "PUT", "Purge"]),
            any::<bool>(),
            host(),
            "/[a-zA-Z0-9%._~/+-]{0,30}",
            "[a-zA-Z0-9%=&+;]{0,30}",
            prop::collection::vec((header_name(), header_bytes()), 0..12),
        ),
        (
            prop::sample::select(vec![
                "10.0.0.1",
                "192.0.2.7",
                "::ffff:10.1.2.3",
                "2001:db8::5",
                "127.0.0.1",
            ]),
            0u8..4,
            any::<bool>(),
            prop::sample::select(vec![16usize, 64, 16 * 1024]),
            prop::option::of(prop::sample::select(vec!["u1", "", "u2"])),
            prop::option::of(prop::sample::select(vec!["acme", "", "other"])),
            prop::option::of(1u64..4),
        ),
    )
        .prop_map(
            |(
                (method, absolute, host, path, query, headers),
                (peer, proxies, viewer, max_uri, claims, app, cost),
            )| Input {
                method,
                absolute,
                host,
                path,
                query,
                headers,
                peer: peer.parse().unwrap(),
                proxies,
                viewer,
                max_uri,
                claims,
                app,
                cost,
            },
        )
}

fn request(i: &Input) -> Request<Bytes> {
    let target = format!("{}?{}", i.path, i.query);
    let absolute = std::str::from_utf8(&i.host)
        .ok()
        .filter(|_| i.absolute)
        .and_then(|h| {
            format!("http://{}{target}", h.trim())
                .parse::<http::Uri>()
                .ok()
        });
    let uri = absolute.unwrap_or_else(|| target.parse().unwrap());
    let mut req = Request::builder()
        .method(i.method)
        .uri(uri)
        .extension(ClientIp(i.peer))
        .body(Bytes::new())
        .unwrap();
    let h = req.headers_mut();
    if let Ok(v) = HeaderValue::from_bytes(&i.host) {
        h.insert("host", v);
    }
    for (n, v) in &i.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_bytes(v),
        ) {
            h.append(n, v);
        }
    }
    let ext = req.extensions_mut();
    if let Some(sub) = i.claims {
        ext.insert(VerifiedClaims::new([("sub", sub)]));
    }
    if let Some(t) = i.app {
        ext.insert(AppValues::new([("tenant", t), ("tenant", "second")]));
    }
    if let Some(c) = i.cost {
        ext.insert(Cost(c));
    }
    req
}

fn extractor(i: &Input) -> RequestExtractor {
    let proxies = match i.proxies {
        0 => TrustedProxies::none(),
        1 => TrustedProxies::hops(2),
        2 => TrustedProxies::cidrs(["10.0.0.0/8".parse::<Cidr>().unwrap()]),
        _ => TrustedProxies::hops(1).header(ForwardedHeader::Forwarded),
    };
    let mut e = RequestExtractor::new()
        .trusted_proxies(proxies)
        .max_uri_bytes(i.max_uri);
    if i.viewer {
        e = e.viewer_headers(
            ViewerHeaders::new()
                .country(HeaderName::from_static("cf-ipcountry"))
                .asnum(HeaderName::from_static("x-asn"))
                .ja4(HeaderName::from_static("x-ja4"))
                .locale(HeaderName::from_static("accept-language")),
        );
    }
    e
}

fn key_rules() -> Vec<Arc<Rule>> {
    let json: Vec<String> = KEYS
        .iter()
        .enumerate()
        .map(|(n, key)| {
            format!(
                r#"{{"id": "k{n}", "expression": "http.request.uri.path ne \"/never\"",
                    "algorithm": "fixed_window",
                    "limit": 5, "period": "1m", "key": {key:?}, "on_missing_key": "skip"}}"#
            )
        })
        .collect();
    let set = RuleSet::from_json(&format!("[{}]", json.join(","))).expect("key rules");
    set.rules().to_vec()
}

/// The headers the expressions and key rules read.
fn headers_read(exprs: &[Expression], rules: &[Arc<Rule>]) -> Vec<String> {
    let mut out = Vec::new();
    for e in exprs {
        e.headers_used(&mut out);
    }
    for r in rules {
        r.headers_used(&mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// The owned copy of `view` with what the rules here read: the headers in
/// `only`, the claim `sub` and the application value `tenant`.
fn owned(view: &HttpView<'_>, only: &[String]) -> RequestAttrs {
    let headers: Vec<&str> = only.iter().map(String::as_str).collect();
    let reads = Reads {
        headers: &headers,
        claims: &["sub"],
        app_values: &["tenant"],
    };
    owned_attrs(view, &reads)
}

fn fields_match(v: &dyn RequestView, a: &RequestAttrs) -> Result<(), TestCaseError> {
    prop_assert_eq!(v.client_ip(), a.client_ip);
    prop_assert_eq!(v.method(), a.method.as_str());
    prop_assert_eq!(v.host(), a.host.as_str());
    prop_assert_eq!(v.path(), a.path.as_str());
    prop_assert_eq!(v.query(), a.query.as_str());
    prop_assert_eq!(v.query_arg_bytes("q"), a.query_arg_bytes("q"));
    prop_assert_eq!(v.cookie("sid"), a.cookie("sid"));
    prop_assert_eq!(v.jwt_claim("sub"), a.jwt_claim("sub"));
    prop_assert_eq!(v.app_value("tenant"), a.app_value("tenant"));
    prop_assert_eq!(v.cost(), a.cost);
    prop_assert_eq!(v.viewer(ViewerFact::Country), a.country.as_deref());
    prop_assert_eq!(v.viewer(ViewerFact::Asnum), a.asnum.as_deref());
    prop_assert_eq!(v.viewer(ViewerFact::Ja4), a.ja4.as_deref());
    prop_assert_eq!(v.viewer(ViewerFact::Locale), a.locale.as_deref());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_view_and_the_owned_attributes_read_alike(i in input()) {
        let req = request(&i);
        let ex = extractor(&i);
        let exprs: Vec<Expression> =
            EXPRESSIONS.iter().map(|e| e.parse().expect("expression")).collect();
        let rules = key_rules();
        let only = headers_read(&exprs, &rules);
        // A request refused 414 / 431 reaches no rule.
        let Ok(view) = ex.try_view(&req, &only) else { return Ok(()) };
        let owned = owned(&view, &only);
        fields_match(&view, &owned)?;
        for name in &only {
            prop_assert_eq!(view.header(name), owned.header(name), "{}", name);
        }
        for (src, e) in EXPRESSIONS.iter().zip(&exprs) {
            prop_assert_eq!(e.matches(&view), e.matches(&owned), "{}", src);
        }
        for r in &rules {
            let key = HashKey::DEFAULT;
            prop_assert_eq!(subject(r, &view, &key, false), subject(r, &owned, &key, false), "{}", r.id);
            prop_assert_eq!(subject(r, &view, &key, true), subject(r, &owned, &key, true), "{}", r.id);
        }
    }

    #[test]
    fn the_view_and_the_owned_attributes_get_the_same_verdicts(i in input()) {
        let req = request(&i);
        let ex = extractor(&i);
        let set = RuleSet::from_json(RULES).expect("rules");
        let clock = ManualClock::new(1_000_000);
        let limiter = |set: RuleSet| {
            let key = HashKey::new([7; 16]);
            Limiter::builder(set).clock(clock.clone()).hash_key(key).reports(true).build()
        };
        let (by_view, by_attrs) = (limiter(set.clone()), limiter(set));
        let only = by_view.snapshot().headers_used().to_vec();
        let Ok(view) = ex.try_view(&req, &only) else { return Ok(()) };
        let owned = owned(&view, &only);
        for round in 0..4 {
            let a = by_view.check(&view).into_ready().expect("in memory");
            let b = by_attrs.check(&owned).into_ready().expect("in memory");
            prop_assert_eq!(a.outcome, b.outcome, "round {}", round);
            prop_assert_eq!(a.retry_after_ms, b.retry_after_ms);
            prop_assert_eq!(&a.headers, &b.headers);
            prop_assert_eq!(&a.would_limit, &b.would_limit);
            prop_assert_eq!(&a.reports, &b.reports);
            clock.advance(std::time::Duration::from_secs(7));
        }
    }
}

#[test]
fn claims_are_borrowed_from_the_extension() {
    let claims: BTreeMap<String, String> = [("sub".to_owned(), "u1".to_owned())].into();
    let req = Request::builder()
        .extension(ClientIp("192.0.2.1".parse().unwrap()))
        .extension(VerifiedClaims(claims))
        .body(())
        .unwrap();
    let view = RequestExtractor::new().view(&req);
    let from_ext = req.extensions().get::<VerifiedClaims>().unwrap();
    let claim = view.jwt_claim("sub").unwrap();
    assert!(std::ptr::eq(claim, from_ext.0["sub"].as_str()));
}
