//! A lone plain `["ip"]` rule is a compiled plan that reads only the client
//! address and the cost (`Snapshot::reads_address_only`): the layer then
//! checks an address-only view instead of the full one. Random requests
//! (long paths and hosts, `Cost`, forwarding headers, trusted proxies,
//! IPv4-mapped peers) through it and through the same rule on the general
//! path (a second rule that never matches takes the set off the plan) get
//! the same answers.

use std::convert::Infallible;

use http::{Request, Response};
use proptest::prelude::*;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock};
use ratelimit_tower::{ClientIp, Cost, RateLimitLayer, TrustedProxies};
use tower::{Layer, Service, ServiceExt};

const T0: u64 = 1_767_225_600_000;

const PER_IP: &str = r#"{"id": "per-ip", "expression": "true", "algorithm": "fixed_window",
    "limit": 3, "period": "1m", "key": ["ip"], "ratelimit_headers": true}"#;

/// Never matches, and its key starts with `per-ip`'s: the set is not
/// compiled, the answers are `per-ip`'s alone.
const NEVER: &str = r#"{"id": "never", "expression": "http.request.uri.path eq \"/never\"",
    "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip", "header:x-never"]}"#;

fn limiter(rules: &str) -> Limiter {
    let set = RuleSet::from_json_at(rules, T0).expect("rules");
    Limiter::builder(set).clock(ManualClock::new(T0)).build()
}

#[derive(Debug, Clone)]
struct Req {
    peer: usize,
    xff: Option<usize>,
    path_len: usize,
    host_len: usize,
    cost: Option<u64>,
}

const PEERS: [&str; 3] = ["127.0.0.1", "::ffff:127.0.0.1", "203.0.113.9"];
const CLIENTS: [&str; 3] = ["198.51.100.1", "198.51.100.2", "2001:db8::7"];

fn req() -> impl Strategy<Value = Req> {
    let sizes = prop_oneof![8 => Just(1usize), 1 => Just(16 * 1024), 1 => Just(16 * 1024 + 1)];
    (
        0..PEERS.len(),
        prop::option::of(0..CLIENTS.len()),
        sizes.clone(),
        sizes,
    )
        .prop_flat_map(|(peer, xff, path_len, host_len)| {
            prop::option::of(1..3u64).prop_map(move |cost| Req {
                peer,
                xff,
                path_len,
                host_len,
                cost,
            })
        })
}

fn request(r: &Req) -> Request<()> {
    let path = format!("/{}", "a".repeat(r.path_len));
    let host = format!("{}.example.com", "h".repeat(r.host_len));
    let mut b = Request::builder()
        .uri(path)
        .header("host", host)
        .extension(ClientIp(PEERS[r.peer].parse().expect("peer")));
    if let Some(c) = r.xff {
        b = b.header("x-forwarded-for", CLIENTS[c]);
    }
    if let Some(cost) = r.cost {
        b = b.extension(Cost(cost));
    }
    b.body(()).expect("request")
}

/// Status and headers of each answer of `reqs` through a layer on `rules`.
async fn answers(rules: &str, proxies: bool, reqs: &[Req]) -> Vec<String> {
    let limiter = limiter(rules);
    assert_eq!(
        limiter.snapshot().reads_address_only(),
        !rules.contains("never")
    );
    let mut layer = RateLimitLayer::new(limiter);
    if proxies {
        layer = layer.trusted_proxies(TrustedProxies::hops(1));
    }
    let handler = tower::service_fn(|_req: Request<()>| async {
        Ok::<_, Infallible>(Response::new(String::from("ok")))
    });
    let mut svc = layer.layer(handler);
    let mut out = Vec::new();
    for r in reqs {
        let res = svc.ready().await.expect("ready").call(request(r)).await;
        let res = res.expect("answer");
        out.push(format!("{} {:?}", res.status(), res.headers()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_address_only_view_answers_as_the_full_view(
        reqs in prop::collection::vec(req(), 1..16),
        proxies in any::<bool>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let compiled = rt.block_on(answers(&format!("[{PER_IP}]"), proxies, &reqs));
        let general = rt.block_on(answers(&format!("[{PER_IP}, {NEVER}]"), proxies, &reqs));
        prop_assert_eq!(compiled, general);
    }
}
