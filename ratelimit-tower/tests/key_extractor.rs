//! Key parts derived by the layer (`RateLimitLayer::key_part`) over axum:
//! rules key on `app:<name>`, a missing value takes the rule's
//! `on_missing_key`, and `Router::route_layer` gives routes their own limits.

mod support;

use std::net::IpAddr;

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use http::Request;
use ratelimit_tower::{AppValues, ClientIp, RequestHead};
use support::*;
use tower::ServiceExt;

/// A per-tenant limit across IPs, with a site-wide per-IP backstop (the
/// tenant comes from a client-chosen API key, so it needs one).
const TENANT_RULES: &str = r#"[
    {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
     "limit": 1000, "period": "1m", "key": ["ip"]},
    {"id": "per-tenant", "expression": "true", "algorithm": "fixed_window",
     "limit": 2, "period": "1m", "key": ["app:tenant"], "on_missing_key": "reject"}
]"#;

/// The tenant is the API key's part before the first '.'.
fn tenant(req: &RequestHead<'_>) -> Option<String> {
    let key = req.headers().get("x-api-key")?.to_str().ok()?;
    Some(key.split_once('.')?.0.to_owned())
}

/// Sends `GET path` from `ip` with these headers through `app` (the peer
/// address as a `ClientIp` extension).
async fn call(app: &Router, ip: &str, path: &str, headers: &[(&str, &str)]) -> u16 {
    let mut req = Request::get(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut req = req.body(Body::empty()).unwrap();
    let ip: IpAddr = ip.parse().unwrap();
    req.extensions_mut().insert(ClientIp(ip));
    app.clone().oneshot(req).await.unwrap().status().as_u16()
}

fn tenant_app(clock: &ratelimit_core::ManualClock) -> Router {
    let layer = layer(TENANT_RULES, clock).key_part("tenant", tenant);
    Router::new().route("/", get(ok)).layer(layer)
}

#[tokio::test]
async fn a_derived_key_part_is_one_counter_across_ips_and_keys() {
    let clock = clock();
    let app = tenant_app(&clock);
    let key = |k: &'static str| [("x-api-key", k)];
    assert_eq!(call(&app, "192.0.2.1", "/", &key("acme.one")).await, 200);
    assert_eq!(call(&app, "192.0.2.2", "/", &key("acme.two")).await, 200);
    assert_eq!(
        call(&app, "192.0.2.3", "/", &key("acme.three")).await,
        429,
        "the third request of tenant acme, from a third IP and key"
    );
    assert_eq!(
        call(&app, "192.0.2.1", "/", &key("globex.one")).await,
        200,
        "another tenant, another counter"
    );
    advance(&clock, 60);
    assert_eq!(call(&app, "192.0.2.3", "/", &key("acme.three")).await, 200);
}

#[tokio::test]
async fn a_missing_derived_part_takes_on_missing_key() {
    let clock = clock();
    let app = tenant_app(&clock);
    assert_eq!(call(&app, "192.0.2.1", "/", &[]).await, 400, "no API key");
    assert_eq!(
        call(&app, "192.0.2.1", "/", &[("x-api-key", "no-dot")]).await,
        400,
        "the extractor found no tenant"
    );
}

#[tokio::test]
async fn the_derived_part_comes_before_an_app_values_extension() {
    let clock = clock();
    // The application's own layer claims every request is tenant "ext".
    let app = tenant_app(&clock).layer(axum::middleware::from_fn(
        |mut req: axum::extract::Request, next: axum::middleware::Next| async move {
            req.extensions_mut()
                .insert(AppValues::new([("tenant", "ext")]));
            next.run(req).await
        },
    ));
    for i in 0..2 {
        let k = format!("t{i}.key");
        assert_eq!(
            call(&app, "192.0.2.1", "/", &[("x-api-key", &k)]).await,
            200
        );
    }
    // Without a derived value the extension counts: tenant "ext" is new.
    assert_eq!(call(&app, "192.0.2.1", "/", &[]).await, 200);
    assert_eq!(call(&app, "192.0.2.1", "/", &[]).await, 200);
    assert_eq!(call(&app, "192.0.2.1", "/", &[]).await, 429);
}

#[tokio::test]
async fn route_layers_give_each_route_its_own_limit() {
    let clock = clock();
    let one = r#"[{"id": "search", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"]}]"#;
    let three = r#"[{"id": "items", "expression": "true", "algorithm": "fixed_window",
        "limit": 3, "period": "1m", "key": ["ip"]}]"#;
    // `route_layer` wraps the routes added before it, so each limited route
    // is a router of its own, merged.
    let app = Router::new()
        .merge(
            Router::new()
                .route("/search", get(ok))
                .route_layer(layer(one, &clock)),
        )
        .merge(
            Router::new()
                .route("/items", get(ok))
                .route_layer(layer(three, &clock)),
        )
        .route("/health", get(ok));
    let mut search = Vec::new();
    let mut items = Vec::new();
    for _ in 0..4 {
        search.push(call(&app, "192.0.2.1", "/search", &[]).await);
        items.push(call(&app, "192.0.2.1", "/items", &[]).await);
    }
    assert_eq!(search, [200, 429, 429, 429]);
    assert_eq!(items, [200, 200, 200, 429]);
    for _ in 0..5 {
        assert_eq!(call(&app, "192.0.2.1", "/health", &[]).await, 200);
    }
    assert_eq!(call(&app, "192.0.2.1", "/health", &[]).await, 200);
    assert_eq!(call(&app, "192.0.2.1", "/nope", &[]).await, 404);
}

/// The user an outer auth layer put in the extensions.
#[derive(Clone)]
struct User(&'static str);

#[tokio::test]
async fn an_extractor_reads_the_headers_and_extensions_once_per_request() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let clock = clock();
    let rules = r#"[{"id": "per-user", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip", "app:who"], "on_missing_key": "reject"}]"#;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let who = move |req: &RequestHead<'_>| {
        counted.fetch_add(1, Ordering::Relaxed);
        let user = req.extensions().get::<User>()?.0;
        let team = req.headers().get("x-team")?.to_str().ok()?;
        Some(format!("{user}@{team}"))
    };
    let layer = layer(rules, &clock).max_uri_bytes(64).key_part("who", who);
    let app = Router::new()
        .route("/", get(ok))
        .layer(layer)
        .layer(axum::middleware::from_fn(
            |mut req: axum::extract::Request, next: axum::middleware::Next| async move {
                req.extensions_mut().insert(User("ann"));
                next.run(req).await
            },
        ));
    let team = |t: &'static str| [("x-team", t)];
    assert_eq!(call(&app, "192.0.2.1", "/", &team("red")).await, 200);
    assert_eq!(
        call(&app, "192.0.2.1", "/", &team("red")).await,
        429,
        "ann@red again"
    );
    assert_eq!(
        call(&app, "192.0.2.1", "/", &team("blue")).await,
        200,
        "the header is read: ann@blue is another key"
    );
    assert_eq!(
        call(&app, "192.0.2.1", "/", &[]).await,
        400,
        "no x-team: the part is missing"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 4, "one call per request");
    let long = format!("/?q={}", "a".repeat(100));
    assert_eq!(call(&app, "192.0.2.1", &long, &team("red")).await, 414);
    assert_eq!(
        calls.load(Ordering::Relaxed),
        4,
        "a request refused for its size never reaches the extractor"
    );
}
