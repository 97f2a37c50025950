//! What the application puts on the request: a cost (`Cost`) and key parts
//! (`AppValues`, such as the username parsed from a login form).

mod support;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use ratelimit_tower::{AppValues, Cost};
use support::*;

const RULES: &str = r#"[
    {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
     "limit": 1000, "period": "1m", "key": ["ip"]},
    {"id": "search", "expression": "http.request.uri.path eq \"/search\"",
     "algorithm": "token_bucket", "limit": 10, "burst": 10, "period": "1m", "key": ["ip"]},
    {"id": "login-user", "expression": "http.request.uri.path eq \"/login\"",
     "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["app:username"],
     "on_missing_key": "skip"}
]"#;

/// The application's own layer: an expensive search costs 4, and the login
/// form's username becomes a key part.
async fn app_layer(mut req: Request, next: Next) -> Response {
    if req.uri().path() == "/search" {
        req.extensions_mut().insert(Cost(4));
    }
    let user = req
        .headers()
        .get("x-form-username")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(user) = user {
        req.extensions_mut()
            .insert(AppValues::new([("username", user)]));
    }
    next.run(req).await
}

#[tokio::test]
async fn the_application_charges_a_cost_and_supplies_key_parts() {
    let clock = clock();
    let layer = layer(RULES, &clock);
    let app = Router::new()
        .route("/search", post(ok))
        .route("/login", post(ok))
        .layer(layer)
        .layer(middleware::from_fn(app_layer));
    let addr = serve_axum(app).await;
    let search: Vec<u16> = statuses_post(addr, "/search", 3).await;
    assert_eq!(search, [200, 200, 429], "10 tokens, 4 a search");

    let login = |user: &'static str| async move {
        let req = request("POST", "/login")
            .header("x-form-username", user)
            .body(Default::default())
            .unwrap();
        send(addr, req).await.status.as_u16()
    };
    assert_eq!(
        [
            login("alice").await,
            login("alice").await,
            login("alice").await
        ],
        [200, 200, 429]
    );
    assert_eq!(login("bob").await, 200, "another username, another counter");
}

async fn statuses_post(addr: std::net::SocketAddr, path: &str, n: usize) -> Vec<u16> {
    let mut out = Vec::new();
    for _ in 0..n {
        let req = request("POST", path).body(Default::default()).unwrap();
        out.push(send(addr, req).await.status.as_u16());
    }
    out
}
