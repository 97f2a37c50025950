//! Limits per plan through the layer, with the rules of
//! `examples/plans.rs`, on the in-memory backend and on Valkey: rules match
//! on verified claims and application values, never on headers.

mod support;

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;

use http::{Request, Response};
use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::{ClientIp, Limiter, ManualClock};
use ratelimit_tower::{AppValues, RateLimitLayer, VerifiedClaims};
use support::*;
use tower::{Layer, Service, ServiceExt};

const RULES: &str = include_str!("../../examples/rules/plans.json");

/// A caller: its IP, and the claims and tenant the auth layer vouches for.
struct Caller {
    ip: &'static str,
    token: Option<(&'static str, &'static str, &'static str)>,
    headers: &'static [(&'static str, &'static str)],
}

struct Answer {
    status: u16,
    ratelimit: Option<String>,
    retry_after: Option<String>,
}

async fn call<S, B>(svc: &S, c: &Caller) -> Answer
where
    S: Service<Request<String>, Response = Response<B>, Error = Infallible> + Clone,
{
    let mut req = Request::builder().uri("/api");
    for (k, v) in c.headers {
        req = req.header(*k, *v);
    }
    let mut req = req.body(String::new()).unwrap();
    let ip: IpAddr = c.ip.parse().unwrap();
    req.extensions_mut().insert(ClientIp(ip));
    if let Some((sub, plan, tenant)) = c.token {
        req.extensions_mut()
            .insert(VerifiedClaims::new([("sub", sub), ("plan", plan)]));
        req.extensions_mut()
            .insert(AppValues::new([("tenant", tenant)]));
    }
    let res = svc.clone().oneshot(req).await.unwrap();
    let header = |n: &str| res.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
    Answer {
        status: res.status().as_u16(),
        ratelimit: header("ratelimit"),
        retry_after: header("retry-after"),
    }
}

const FREE: Caller = Caller {
    ip: "192.0.2.1",
    token: Some(("alice", "free", "alice-co")),
    headers: &[],
};
const PRO: Caller = Caller {
    ip: "192.0.2.2",
    token: Some(("bob", "pro", "bob-co")),
    headers: &[],
};
const BIGCORP_1: Caller = Caller {
    ip: "192.0.2.3",
    token: Some(("carol", "pro", "bigcorp")),
    headers: &[],
};
const BIGCORP_2: Caller = Caller {
    ip: "192.0.2.4",
    token: Some(("dave", "pro", "bigcorp")),
    headers: &[],
};
const MONITOR: Caller = Caller {
    ip: "192.0.2.5",
    token: Some(("svc-monitor", "free", "ops")),
    headers: &[],
};
/// No verified token, but headers and a query that name a plan.
const FORGER: Caller = Caller {
    ip: "192.0.2.6",
    token: None,
    headers: &[("plan", "pro"), ("x-plan", "pro"), ("tenant", "bigcorp")],
};

fn starts(r: &Answer, prefix: &str) -> bool {
    r.ratelimit
        .as_deref()
        .is_some_and(|h| h.starts_with(prefix))
}

async fn plans_scenario(backend: Arc<dyn Backend>, clock: ManualClock) {
    let limiter = Limiter::builder(rules(RULES))
        .clock(clock.clone())
        .backend_arc(backend)
        .build();
    let svc = RateLimitLayer::new(limiter.clone()).layer(tower::service_fn(
        |_req: Request<String>| async { Ok::<_, Infallible>(Response::new(String::from("ok"))) },
    ));

    // Free: 100 a minute per sub.
    for i in 0..100 {
        let r = call(&svc, &FREE).await;
        assert_eq!(r.status, 200, "free request {i}");
        assert!(starts(&r, r#""plan-free";"#), "{:?}", r.ratelimit);
    }
    let r = call(&svc, &FREE).await;
    assert_eq!(
        (r.status, r.retry_after.as_deref()),
        (429, Some("61")),
        "60.6 s: sliding window"
    );

    // Pro: 1,000 a minute per sub.
    for i in 0..1000 {
        let r = call(&svc, &PRO).await;
        assert_eq!(r.status, 200, "pro request {i}");
    }
    let r = call(&svc, &PRO).await;
    assert_eq!(r.status, 429);
    assert!(starts(&r, r#""plan-pro";r=0;"#), "{:?}", r.ratelimit);

    // Bigcorp: its own rule, shared by the whole tenant.
    let r = call(&svc, &BIGCORP_1).await;
    assert!(
        starts(&r, r#""tenant-bigcorp";r=4999;"#),
        "{:?}",
        r.ratelimit
    );
    let r = call(&svc, &BIGCORP_2).await;
    assert!(
        starts(&r, r#""tenant-bigcorp";r=4998;"#),
        "{:?}",
        r.ratelimit
    );

    // The monitor is on plan-free's allow list.
    for _ in 0..150 {
        let r = call(&svc, &MONITOR).await;
        assert_eq!((r.status, r.ratelimit), (200, None));
    }

    // Headers are not claims: the forger is anonymous, 10 a minute per IP.
    for _ in 0..10 {
        let r = call(&svc, &FORGER).await;
        assert!(starts(&r, r#""anonymous";"#), "{:?}", r.ratelimit);
    }
    assert_eq!(call(&svc, &FORGER).await.status, 429);

    // With the ignore-JWT switch on, claims are missing: alice (out of her
    // free quota) is anonymous, on an IP of her own.
    limiter.switches().set_disable_jwt(true);
    let r = call(&svc, &FREE).await;
    assert_eq!(r.status, 200);
    assert!(starts(&r, r#""anonymous";r=9;"#), "{:?}", r.ratelimit);
    limiter.switches().set_disable_jwt(false);

    // A minute and a half later the windows have moved on.
    clock.set_ms(T0 + 120_000);
    assert_eq!(call(&svc, &FREE).await.status, 200);
    assert_eq!(call(&svc, &PRO).await.status, 200);
}

#[tokio::test]
async fn plans_on_the_memory_backend() {
    let clock = clock();
    plans_scenario(Arc::new(MemoryBackend::default()), clock).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_on_valkey() {
    let server = ratelimit_testkit::valkey::server();
    let backend = ratelimit_testkit::valkey::injected(server.url()).await;
    plans_scenario(Arc::new(backend), clock()).await;
}
