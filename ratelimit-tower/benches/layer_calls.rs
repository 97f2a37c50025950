//! `REQUESTS` allowed requests (1000 unless set) through the layer on the
//! in-memory backend, or straight to the inner service with `PLAIN` set: a
//! driver for counting what one request costs under valgrind, where
//! wall-clock time on a shared machine says little.
//!
//! ```text
//! cargo bench -p ratelimit-tower --bench layer_calls --no-run
//! REQUESTS=1000 valgrind --tool=memcheck target/release/deps/layer_calls-*   # "total heap usage"
//! REQUESTS=2000 valgrind --tool=memcheck target/release/deps/layer_calls-*
//! REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*  # "Collected"
//! ```
//!
//! The difference between two runs over the difference in `REQUESTS` is
//! the cost of one request (building it, the layer, the handler, dropping
//! the response); the same with `PLAIN` set is what the layer does not
//! add. The rules are the `decide` bench's `request/2_rules` (a site-wide
//! rule with `RateLimit` headers and a rule keyed on a header), limits high
//! enough that every request is forwarded.
//!
//! With `REFUSE` set, every request but the first is refused instead: the
//! site-wide rule allows one request per address per minute, every request
//! comes from the same address, and the clock stands still, so the layer answers
//! 429 with its JSON body and headers (the inner service is never called).
//!
//! With `PROXIES` set, the peer is a trusted proxy
//! (`TrustedProxies::hops(2)`) and each request carries
//! `X-Forwarded-For: <client>, 10.0.0.1`: the client address is read from
//! the header.
//!
//! ```text
//! PROXIES=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! REFUSE=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! ```
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::net::IpAddr;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{ClientIp, Limiter, ManualClock};
use ratelimit_tower::{RateLimitLayer, TrustedProxies};
use tower::{Layer, Service, ServiceExt};

const RULES: &str = r#"[
  {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
   "limit": 1000000, "period": "1m", "key": ["ip"], "ratelimit_headers": true},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
   "algorithm": "leaky_bucket", "limit": 1000000, "burst": 1000000, "period": "1s",
   "key": ["ip", "header:x-user"]}]"#;

/// The same rules, the site-wide one allowing a single request per user.
const REFUSING_RULES: &str = r#"[
  {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
   "limit": 1, "period": "1m", "key": ["ip"], "ratelimit_headers": true},
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
   "algorithm": "leaky_bucket", "limit": 1000000, "burst": 1000000, "period": "1s",
   "key": ["ip", "header:x-user"]}]"#;

fn request(i: u32, proxies: bool) -> Request<()> {
    let ip = IpAddr::from([198, 51, (i / 250 % 250) as u8, (i % 250) as u8]);
    let builder = match proxies {
        true => Request::builder().header("x-forwarded-for", format!("{ip}, 10.0.0.1")),
        false => Request::builder(),
    };
    builder
        .method("POST")
        .uri("/login?next=%2Fhome")
        .header("host", "example.com")
        .header("x-user", "ann")
        .header("user-agent", "probe/1.0")
        .extension(ClientIp(ip))
        .body(())
        .expect("request")
}

fn main() {
    let n: u32 = std::env::var("REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let plain = std::env::var_os("PLAIN").is_some();
    let refuse = std::env::var_os("REFUSE").is_some();
    let proxies = std::env::var_os("PROXIES").is_some();
    let rules = RuleSet::from_json(if refuse { REFUSING_RULES } else { RULES }).expect("rules");
    let clock = ManualClock::new(1_767_225_600_000);
    let limiter = Limiter::builder(rules).clock(clock).build();
    let handler = tower::service_fn(|_req: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let forwarded = rt.block_on(async move {
        let mut layer = RateLimitLayer::new(limiter);
        if proxies {
            layer = layer.trusted_proxies(TrustedProxies::hops(2));
        }
        let mut layered = layer.layer(handler);
        let mut handler = handler;
        let mut forwarded = 0u32;
        for i in 0..n {
            let ok = if plain {
                let svc = handler.ready().await.expect("ready");
                svc.call(request(if refuse { 0 } else { i }, proxies))
                    .await
                    .expect("answer")
                    .status()
                    .is_success()
            } else {
                let svc = layered.ready().await.expect("ready");
                svc.call(request(if refuse { 0 } else { i }, proxies))
                    .await
                    .expect("answer")
                    .status()
                    .is_success()
            };
            forwarded += u32::from(ok);
        }
        forwarded
    });
    println!("{forwarded} of {n} requests forwarded");
}
