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
//! add. Every run calibrates `quanta`'s counter once (loading the rules
//! reads `SystemClock`, and tower_governor reads its own clock), a varying
//! number of instructions: take the inclusive count of
//! `quanta::Clock::new` (`callgrind_annotate --inclusive=yes`) out of each
//! run's total before the difference.
//!
//! The rules are the `decide` bench's `request/2_rules` (a site-wide
//! rule with `RateLimit` headers and a rule keyed on a header), limits high
//! enough that every request is forwarded.
//!
//! With `REFUSE` set, every request but the first is refused instead: the
//! site-wide rule allows one request per address per minute, every request
//! comes from the same address, and the clock stands still, so the layer
//! answers 429 with its JSON body and headers (the inner service is never
//! called).
//!
//! With `PROXIES` set, the peer is a trusted proxy
//! (`TrustedProxies::hops(2)`) and each request carries
//! `X-Forwarded-For: <client>, 10.0.0.1`: the client address is read from
//! the header.
//!
//! With `KEYS` set, the login rule keys on `app:user` instead of the
//! header, a value a key extractor (`RateLimitLayer::key_part`) derives
//! from the `x-user` header. Per request (2026-12-01, two or three runs
//! each): 14,345 / 14,308 instructions when the layer built the view twice
//! and lent the request's head out to the extractors, 13,811 / 13,748 /
//! 13,764 with one view and the head borrowed (issue 28.3), 13,718 / 13,739
//! once a derived value no longer looks up the `AppValues` extension;
//! 12,808 without `KEYS`.
//!
//! With `BOXED` set, the inner service is a `tower::util::BoxCloneService`
//! with some state, as axum's routes are (cloning one allocates).
//!
//! With `AXUM` set, the `http` bench's shape instead (see `axum_shape`):
//! ours, or with `GOVERNOR` `tower_governor` configured as there, or with
//! `PLAIN` the handler alone; `REFUSE` refuses as there. With `SAME` also
//! set, every request comes from one address, as wrk's do in that bench
//! (otherwise each request is a new key).
//!
//! With `GRPC` also set (beside `AXUM`), each request is a unary gRPC call
//! as tonic's client sends it (`POST /grpc.health.v1.Health/Check`,
//! `content-type: application/grpc`, `te: trailers`), its peer in tonic's
//! `TcpConnectInfo`; build with `--features tonic` for the layer to read
//! it (`cargo bench -p ratelimit-tower --features tonic --bench layer_calls
//! --no-run`). The allowed path of a gRPC call is the HTTP one: the layer
//! looks at the content type only to answer. Issue 37 (2026-12-04, per
//! request, 1,000 to 2,000 requests, instructions / allocations):
//!
//! | `AXUM=1` and | handler alone (`PLAIN=1`) | through the layer | the layer's part |
//! | --- | --- | --- | --- |
//! | `SAME=1` (HTTP) | 3,289 / 8 | 4,982 / 8 | +1,693 / 0 |
//! | `SAME=1 GRPC=1` | 6,038 / 11 | 7,743 / 11 | +1,705 / 0 |
//! | `REFUSE=1` (HTTP) | | 6,207 / 9 | |
//! | `REFUSE=1 GRPC=1` | | 13,552 / 17 (17,516 / 30 before the answer was built in place) | |
//!
//! An allowed gRPC call costs the layer what an HTTP request does, plus two
//! lookups in the extensions (axum's `ConnectInfo`, then tonic's
//! `TcpConnectInfo`). A refused one costs about 4,600 instructions and 5
//! allocations more than an HTTP refusal, net of the bigger request (2,749
//! / 3): the pushback's value, the `RetryInfo` in one buffer and its base64,
//! the boxed verdict, the header map's growth.
//!
//! With `SYSTEM_CLOCK` also set (beside `AXUM`), ours reads the default
//! clock (`SystemClock`, the wall clock), as in the `http` bench, instead
//! of a `ManualClock`: tower_governor always reads its own (quanta's), so
//! this is the like-for-like comparison of time; under callgrind the
//! clock's read is a few instructions either way.
//!
//! With `SUBSCRIBER` set, a `tracing` subscriber that takes `INFO` and
//! above is the global default (a service logging at `INFO`, the usual
//! production setting): the layer's debug span is then disabled.
//!
//! With `ROUTER` also set, every answer is turned into axum's response the
//! way a `Router` turns a layer's (`IntoResponse`: any body but axum's own
//! is boxed); with `FOR_AXUM`, ours is `RateLimitLayer::for_axum`, which
//! answers axum's body.
//!
//! ```text
//! AXUM=1 GOVERNOR=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! BOXED=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! PROXIES=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! REFUSE=1 REQUESTS=1000 valgrind --tool=callgrind target/release/deps/layer_calls-*
//! ```
//!
//! Figures (2026-11-30, instructions / allocations per request, 1000 to
//! 2000 requests; runs vary by about 70 instructions, hash seeds). "Before
//! the layer's pass" is after the core's and the store's work; the layer's
//! pass moved the request once instead of five times, built the view where
//! it is returned, skipped the span while nobody listens, looked up claims
//! and app values only when a rule reads them and header names only when
//! the rules read headers:
//!
//! | mode | before issue 13's work | before the layer's pass | after | handler alone (`PLAIN=1`) |
//! | --- | --- | --- | --- | --- |
//! | allowed | 20,450 / 25.1 | 15,567 / 14.1 | 14,595 / 14.1 | 5,228 / 10 |
//! | `REFUSE=1` | 20,826 / 29 | 14,295 / 13 | 13,400 / 13 | |
//! | `PROXIES=1` | 26,904 / 33.1 | 21,213 / 19.1 | 20,261 / 19.1 | 8,655 / 15 |
//! | `BOXED=1` | 21,030 / 27.1 | 15,868 / 15.1 | 14,868 / 15.1 | 5,484 / 11 |
//! | `BOXED=1 REFUSE=1` | 21,064 / 30 | 14,319 / 13 | 13,485 / 13 | |
//! | `AXUM=1` | 10,013 / 12.1 | 8,380 / 8.1 | 7,321 / 8.1 | 3,083 / 8 |
//! | `AXUM=1 REFUSE=1` | 10,746 / 16 | 8,224 / 9 | 7,286 / 9 | |
//!
//! `tower_governor` (`AXUM=1 GOVERNOR=1`) reads the clock through `quanta`,
//! whose start-up calibration runs a varying number of instructions: taken
//! out (its inclusive count in `callgrind_annotate --inclusive=yes`), it is
//! 4,290 / 8 allowing and 6,958 / 17 refusing. Of ours allowing (4,240
//! over the handler alone), the core's decision (`Snapshot::check`) is
//! about 2,730 instructions and the 0.1 added allocations; the layer's own
//! part, about 1,510, allocates nothing in this shape: the view and its
//! bounds (about 400, of which 130 find the `Host` header for the 431
//! check), the peer's lookup in the extensions (about 100), the response
//! future's poll with the headers and the counters (about 500), moves of
//! the request, the future and the response (about 240), drops.
//!
//! The layer's second pass (same measure, after the core's work up to
//! `237ce08`): the response future went from 400 bytes to 136 with axum's
//! handler (the state of a request waiting on a backend with I/O is boxed,
//! a forwarded request keeps only what its verdict asks of the response,
//! the layer's own answers are built when polled, the span is boxed), a
//! response its verdict asks nothing of passes through without header work
//! and without being copied across the state's drop, the `Host` bound looks
//! at the header map's first entry before searching it, the request target
//! is read once, the client address without trusted proxies is the peer at
//! once, and viewer facts are decoded when a rule reads them. Allocations
//! are unchanged in every mode:
//!
//! | mode | before (`237ce08`) | after |
//! | --- | --- | --- |
//! | allowed | 13,643 / 14.1 | 13,355 / 14.1 |
//! | `REFUSE=1` | 12,756 / 13 | 12,406 / 13 |
//! | `PROXIES=1` | 19,242 / 19.1 | 19,274 / 19.1 (the store's variation) |
//! | `BOXED=1` | 13,897 / 15.1 | 13,671 / 15.1 |
//! | `BOXED=1 REFUSE=1` | 12,767 / 13 | 12,414 / 13 |
//! | `AXUM=1` | 6,838 / 8.1 | 6,357 / 8.1 |
//! | `AXUM=1 SAME=1` | 6,564 / 8 | 6,063 / 8 |
//! | `AXUM=1 REFUSE=1` | 7,027 / 9 | 6,703 / 9 |
//!
//! `AXUM=1 SAME=1` over the handler alone (3,082 / 8): 2,981, of which the
//! core's part (`Snapshot::check`, the snapshot, `into_ready`) is about
//! 1,990 and the layer's own about 990 (1,490 before), with nothing
//! allocated: three lookups in the extensions (the peer twice, `Cost`,
//! about 90), the view and its bounds (about 200 with its drop), the
//! response future's poll and drop with the counters (about 250), the
//! verdict's copies and drop (about 130), four copies of the future made by
//! this driver's `.await` (about 115; a server moves it about once).
//!
//! On an axum `Router` (`ROUTER=1`) the layer's `ResponseBody` costs one
//! boxing more per request, which `RateLimitLayer::for_axum` spares
//! (`AXUM=1 SAME=1 ROUTER=1`; a server also polls the body through that
//! box):
//!
//! | `AXUM=1 SAME=1 ROUTER=1` | instructions / allocations |
//! | --- | --- |
//! | handler alone (`PLAIN=1`) | 3,145 / 8 |
//! | ours, the layer itself | 6,310 / 9 |
//! | ours, `for_axum` (`FOR_AXUM=1`) | 6,123 / 8 |
//! | refusing, the layer itself (`REFUSE=1`, not `SAME`) | 6,950 / 10 |
//! | refusing, `for_axum` | 6,957 / 10 |
//!
//! The decision's pass for HTTP (2026-11-30, after `0dfcf88`): a plain rule
//! keyed on the address alone hashes its key as one 8-byte word and a byte
//! into a new hasher (`keys::ip_subject`, -150), and settling a rule's
//! answer is inlined (-25). Allocations are unchanged in every mode:
//!
//! | mode | before | after |
//! | --- | --- | --- |
//! | `AXUM=1 SAME=1` | 5,513 / 8 | 5,335 / 8 |
//! | `AXUM=1` | 5,819 / 8.1 | 5,630 / 8.1 |
//! | `AXUM=1 REFUSE=1` | 6,228 / 9 | 6,082 / 9 |
//! | `AXUM=1 SAME=1 FOR_AXUM=1 ROUTER=1` | 5,572 | 5,394 |
//! | allowed | 12,821 | 12,803 |
//! | `REFUSE=1` | 11,913 | 11,829 |
//! | `PROXIES=1` | 18,754 | 18,675 |
//!
//! `AXUM=1 SAME=1` over the handler alone (3,082): 2,253 (2,431 before).
//! (A third way for a backend to answer at once, the answer to a request
//! of one rule as a return value instead of through `check_now_each`'s
//! callback, took 44 more off; not worth a third method on the public
//! `Backend` trait.)
//!
//! Issue 29 (2026-12-01), with a subscriber taking `INFO` (`SUBSCRIBER=1`,
//! `AXUM=1 SAME=1`): the layer made, boxed, entered and dropped its debug
//! span though the subscriber disabled it; it now keeps a span only when
//! it is enabled (or a `log` logger takes debug records). Without a
//! subscriber nothing changed:
//!
//! | mode | before | after |
//! | --- | --- | --- |
//! | `AXUM=1 SAME=1 SUBSCRIBER=1` | 5,640 / 9 | 5,404 / 8 |
//! | `AXUM=1 SAME=1` | 5,339 / 8 | 5,341 / 8 |
//!
//! Issue 29, the compiled plan (2026-12-01, night): a set whose only rule
//! is a plain site-wide `["ip"]` rule (the `AXUM` shape) runs that rule
//! without the selection, its lists and the steps that find them empty
//! (`ratelimit-core/src/limiter/compiled.rs`); the layer then checks a view
//! of the address and the cost alone, after the same bounds
//! (`extract/address.rs`), unless key extractors need the full view (the
//! span reads its method and path from the request itself). Allocations
//! unchanged; the two-rule modes run the general path (their spread
//! between runs, about 100, is the random hash key's):
//!
//! | mode | before | the plan | and the address view | and with a span too |
//! | --- | --- | --- | --- | --- |
//! | `AXUM=1 SAME=1` | 5,373 / 8 | 5,197 / 8 | 5,073 / 8 | 5,070 / 8 |
//! | `AXUM=1` | 5,674 | 5,491 | 5,367 | |
//! | `AXUM=1 REFUSE=1` | 6,121 | 5,960 | 5,836 | 5,828 |
//! | `AXUM=1 SAME=1 SUBSCRIBER=1` | 5,436 | 5,260 | 5,265 | 5,134 |
//! | allowed (two rules) | 12,768 to 12,811 | 12,848 to 12,900 | 12,872 | 12,869 |
//! | `REFUSE=1` | 11,902 | 11,934 | 11,939 | |
//! | `PROXIES=1` | 18,622 | | 18,677 | |
//!
//! Issue 29, third round (2026-12-01, late; before and after built from
//! the same tree): a request whose extensions hold its peer's address and
//! nothing else holds no `Cost` either, and the address view no longer
//! looks for one (`extract::more_than_peer`; it allocates nothing, and
//! allocations were not counted again):
//!
//! | mode | before | after |
//! | --- | --- | --- |
//! | `AXUM=1 SAME=1` | 5,042 (+1,969 over 3,073) | 5,034 (+1,961) |
//! | `AXUM=1` | 5,358 | 5,333 |
//! | `AXUM=1 REFUSE=1` | 5,799 | 5,791 |
//! | `AXUM=1 SAME=1 SUBSCRIBER=1` | 5,106 | 5,098 |
//! | allowed (two rules) | 12,823 | 12,795 |
//! | `REFUSE=1` | 11,891 | 11,891 |
//! | `PROXIES=1` | 18,695 | 18,638 |
//!
//! Measured and not kept:
//! - looking up the server's address before `ClientIp` when the request
//!   holds one extension (only one of them can be there): `AXUM=1 SAME=1`
//!   5,005 (-37), but a request holding `ClientIp` alone (the two-rule
//!   modes) paid two lookups more, 12,887 and 11,941 (+64, +50);
//! - what a forwarded verdict asks of the response boxed
//!   (`Option<Box<After>>`, the future 80 bytes smaller): -16 on
//!   `AXUM=1 SAME=1`, since the refusal's verdict still sets the future's
//!   size, and one allocation more for every request whose rules send
//!   `RateLimit` headers;
//! - the verdict read in place in its `VerdictFuture` (a public
//!   `ready_mut`) instead of moved out of it by `into_ready`, what the
//!   response needs taken out of it: 5,110 (+76 over the lever kept
//!   above), the future and what is left of the verdict dropped after the
//!   inner call.
//!
//! Issue 29, fourth round (2026-12-02): a compiled plan on the in-memory
//! backend itself (`Backend::in_memory`) counts its one rule on the store
//! directly, without the thread's batch, the check's copy and the
//! backend's loop (`limiter/compiled.rs`); before and after built from the
//! same tree. The two-rule modes have no compiled plan (their difference
//! is the hash seed's):
//!
//! | mode | before | after |
//! | --- | --- | --- |
//! | `AXUM=1 SAME=1` | 5,034 (+1,961 over 3,073) | 4,770 (+1,697) |
//! | `AXUM=1` | 5,333 | 5,063 |
//! | `AXUM=1 REFUSE=1` | 5,791 | 5,703 |
//! | `AXUM=1 SAME=1 SUBSCRIBER=1` | 5,098 | 4,834 |
//! | allowed (two rules) | 12,795 | 12,846 |
//! | `REFUSE=1` | 11,891 | 11,909 |
//! | `PROXIES=1` | 18,638 | 18,682 |
//!
//! Measured and not kept: each thread remembering the digests of the
//! addresses it hashed last (64 slots, a hit exact on the hash key and the
//! whole address): `AXUM=1 SAME=1` 4,575 (-195), but `AXUM=1`, a new
//! address each request, 5,134 (+82 over 5,052 without it). A server with
//! more clients than slots per thread would pay the miss on most requests.
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::net::IpAddr;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{ClientIp, Limiter, ManualClock};
use ratelimit_tower::{RateLimitLayer, RequestHead, TrustedProxies};
use tower::util::BoxCloneService;
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

/// The handler boxed, with some state (a body to answer), as an axum
/// route is: cloning it allocates.
fn boxed_handler() -> BoxCloneService<Request<()>, Response<Full<Bytes>>, Infallible> {
    let body = Bytes::from_static(b"ok");
    BoxCloneService::new(tower::service_fn(move |_req: Request<()>| {
        let body = body.clone();
        async move { Ok::<_, Infallible>(Response::new(Full::new(body))) }
    }))
}

/// `n` requests made by `request` through `svc`; how many were forwarded.
async fn drive<S, B>(mut svc: S, n: u32, request: impl Fn(u32) -> Request<()>) -> u32
where
    S: Service<Request<()>, Response = Response<B>>,
    S::Error: std::fmt::Debug,
{
    let mut forwarded = 0u32;
    for i in 0..n {
        let ready = svc.ready().await.expect("ready");
        let res = ready.call(request(i)).await.expect("answer");
        // A gRPC refusal is an HTTP 200 with its `grpc-status` in the head.
        let refused = res.headers().contains_key("grpc-status");
        forwarded += u32::from(res.status().is_success() && !refused);
    }
    forwarded
}

/// The `http` bench's shape (`AXUM`): one token bucket keyed on the
/// address, no `RateLimit` headers; requests as wrk sends them, the peer in
/// axum's `ConnectInfo`; an axum body. Against the handler alone (`PLAIN`)
/// or `tower_governor` (`GOVERNOR`), configured as in that bench.
mod axum_shape {
    use super::*;
    use axum::extract::ConnectInfo;
    use axum::response::IntoResponse;
    use std::net::SocketAddr;
    use tower_governor::governor::GovernorConfigBuilder;
    use tower_governor::GovernorLayer;

    fn rules(refuse: bool) -> String {
        let (limit, period) = if refuse {
            (1, "1h")
        } else {
            (1_000_000_000, "1s")
        };
        format!(
            r#"[{{"id": "per-ip", "expression": "true", "algorithm": "token_bucket",
                 "limit": {limit}, "burst": {limit}, "period": "{period}", "key": ["ip"]}}]"#
        )
    }

    fn request(i: u32, grpc: bool) -> Request<()> {
        let ip = IpAddr::from([198, 51, (i / 250 % 250) as u8, (i % 250) as u8]);
        if grpc {
            return grpc_request(SocketAddr::new(ip, 40000));
        }
        Request::builder()
            .uri("/")
            .header("host", "127.0.0.1:8080")
            .extension(ConnectInfo(SocketAddr::new(ip, 40000)))
            .body(())
            .expect("request")
    }

    /// A unary gRPC call as tonic's client sends it (`GRPC`), the peer in
    /// tonic's `TcpConnectInfo`, which the layer reads with its `tonic`
    /// feature.
    fn grpc_request(peer: SocketAddr) -> Request<()> {
        let info = tonic::transport::server::TcpConnectInfo {
            local_addr: Some(SocketAddr::from(([127, 0, 0, 1], 50051))),
            remote_addr: Some(peer),
        };
        Request::builder()
            .method("POST")
            .uri("http://127.0.0.1:50051/grpc.health.v1.Health/Check")
            .header("te", "trailers")
            .header("content-type", "application/grpc")
            .header("user-agent", "tonic/0.14.9")
            .extension(info)
            .body(())
            .expect("request")
    }

    pub(super) async fn run(n: u32, plain: bool, governor: bool, refuse: bool) -> u32 {
        let handler = tower::service_fn(|_req: Request<()>| async {
            Ok::<_, Infallible>(Response::new(axum::body::Body::from("hello")))
        });
        let same = refuse || std::env::var_os("SAME").is_some();
        let grpc = std::env::var_os("GRPC").is_some();
        assert!(
            !grpc || plain || cfg!(feature = "tonic"),
            "GRPC=1 reads the peer from TcpConnectInfo: build with --features tonic"
        );
        let request = move |i| request(if same { 0 } else { i }, grpc);
        let router = std::env::var_os("ROUTER").is_some();
        if plain {
            return through(handler, router, n, request).await;
        }
        if governor {
            let mut builder = GovernorConfigBuilder::default();
            if refuse {
                builder.per_second(3600).burst_size(1);
            } else {
                builder.per_nanosecond(1).burst_size(u32::MAX);
            }
            let config = std::sync::Arc::new(builder.finish().expect("governor config"));
            let svc = GovernorLayer::new(config).layer(handler);
            return through(svc, router, n, request).await;
        }
        let rules = RuleSet::from_json(&rules(refuse)).expect("rules");
        let limiter = match std::env::var_os("SYSTEM_CLOCK") {
            // The default clock, as the `http` bench's servers have it.
            Some(_) => Limiter::builder(rules).build(),
            None => (Limiter::builder(rules))
                .clock(ManualClock::new(1_767_225_600_000))
                .build(),
        };
        let layer = RateLimitLayer::new(limiter);
        match std::env::var_os("FOR_AXUM").is_some() {
            true => through(layer.for_axum().layer(handler), router, n, request).await,
            false => through(layer.layer(handler), router, n, request).await,
        }
    }

    /// [`drive`], with `router` every answer turned into axum's response
    /// as a `Router` turns a layer's (`IntoResponse`, which boxes any body
    /// but axum's own).
    async fn through<S, B>(
        svc: S,
        router: bool,
        n: u32,
        request: impl Fn(u32) -> Request<()>,
    ) -> u32
    where
        S: Service<Request<()>, Response = Response<B>>,
        S::Error: std::fmt::Debug,
        Response<B>: IntoResponse,
    {
        match router {
            true => drive(svc.map_response(IntoResponse::into_response), n, request).await,
            false => drive(svc, n, request).await,
        }
    }
}

/// A subscriber that takes `INFO` and above and writes nothing: what the
/// layer pays while a service logs at `INFO` (`SUBSCRIBER`).
struct InfoOnly;

impl tracing::Subscriber for InfoOnly {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        *meta.level() <= tracing::Level::INFO
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::INFO)
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn main() {
    if std::env::var_os("SUBSCRIBER").is_some() {
        tracing::subscriber::set_global_default(InfoOnly).expect("no subscriber yet");
    }
    let n: u32 = std::env::var("REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let plain = std::env::var_os("PLAIN").is_some();
    let refuse = std::env::var_os("REFUSE").is_some();
    let proxies = std::env::var_os("PROXIES").is_some();
    let boxed = std::env::var_os("BOXED").is_some();
    let rules = if refuse { REFUSING_RULES } else { RULES };
    // With `KEYS`, the login rule keys on a value the layer derives.
    let keys = std::env::var_os("KEYS").is_some();
    let rules = match keys {
        true => rules.replace("header:x-user", "app:user"),
        false => rules.to_owned(),
    };
    let rules = RuleSet::from_json(&rules).expect("rules");
    let clock = ManualClock::new(1_767_225_600_000);
    let limiter = Limiter::builder(rules).clock(clock).build();
    let handler = tower::service_fn(|_req: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut layer = RateLimitLayer::new(limiter);
    if proxies {
        layer = layer.trusted_proxies(TrustedProxies::hops(2));
    }
    if keys {
        layer = layer.key_part("user", |req: &RequestHead<'_>| {
            Some(req.headers().get("x-user")?.to_str().ok()?.to_owned())
        });
    }
    let request = move |i| request(if refuse { 0 } else { i }, proxies);
    let forwarded = rt.block_on(async move {
        if std::env::var_os("AXUM").is_some() {
            let governor = std::env::var_os("GOVERNOR").is_some();
            return axum_shape::run(n, plain, governor, refuse).await;
        }
        match (plain, boxed) {
            (true, false) => drive(handler, n, request).await,
            (false, false) => drive(layer.layer(handler), n, request).await,
            (true, true) => drive(boxed_handler(), n, request).await,
            (false, true) => drive(layer.layer(boxed_handler()), n, request).await,
        }
    });
    println!("{forwarded} of {n} requests forwarded");
}
