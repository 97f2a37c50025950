//! JWT claims count only after verification: only the `VerifiedClaims`
//! extension, inserted by the application's auth layer, makes them exist.

mod support;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use ratelimit_tower::{RateLimitLayer, VerifiedClaims};
use support::*;

const RULES: &str = r#"[
    {"id": "fallback", "expression": "http.request.uri.path eq \"/fallback\"",
     "algorithm": "fixed_window", "limit": 2, "period": "1m",
     "key": ["jwt_claim:sub"], "on_missing_key": "fallback_ip"},
    {"id": "skip", "expression": "http.request.uri.path eq \"/skip\"",
     "algorithm": "fixed_window", "limit": 2, "period": "1m",
     "key": ["jwt_claim:sub"], "on_missing_key": "skip"},
    {"id": "reject", "expression": "http.request.uri.path eq \"/reject\"",
     "algorithm": "fixed_window", "limit": 2, "period": "1m",
     "key": ["jwt_claim:sub"], "on_missing_key": "reject"}
]"#;

/// A toy auth layer: `Bearer valid-<sub>` verifies, anything else does not.
async fn auth(mut req: Request, next: Next) -> Response {
    let sub = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer valid-"))
        .map(str::to_owned);
    if let Some(sub) = sub {
        req.extensions_mut()
            .insert(VerifiedClaims::new([("sub", sub)]));
    }
    next.run(req).await
}

async fn server() -> (std::net::SocketAddr, RateLimitLayer) {
    let clock = clock();
    let layer = layer(RULES, &clock);
    let app = Router::new()
        .route("/fallback", get(ok))
        .route("/skip", get(ok))
        .route("/reject", get(ok))
        // The auth layer is outside: it runs first.
        .layer(layer.clone())
        .layer(middleware::from_fn(auth));
    (serve_axum(app).await, layer)
}

async fn as_user(addr: std::net::SocketAddr, path: &str, auth: &str) -> u16 {
    hit_with(addr, path, &[("authorization", auth)])
        .await
        .status
        .as_u16()
}

#[tokio::test]
async fn a_verified_claim_keys_the_rule() {
    let (addr, _) = server().await;
    let alice = "Bearer valid-alice";
    assert_eq!(as_user(addr, "/fallback", alice).await, 200);
    assert_eq!(as_user(addr, "/fallback", alice).await, 200);
    assert_eq!(as_user(addr, "/fallback", alice).await, 429);
    // Another user from the same IP has a counter of their own.
    assert_eq!(as_user(addr, "/fallback", "Bearer valid-bob").await, 200);
}

#[tokio::test]
async fn without_verification_fallback_ip_counts_the_client_ip() {
    let (addr, _) = server().await;
    assert_eq!(statuses(addr, "/fallback", 2).await, [200, 200]);
    // A forged token or a claim-looking header is no claim: same IP bucket.
    assert_eq!(as_user(addr, "/fallback", "Bearer forged-alice").await, 429);
    let r = hit_with(addr, "/fallback", &[("x-jwt-sub", "alice")]).await;
    assert_eq!(r.status, 429);
    // The verified user is not in the IP's bucket.
    assert_eq!(as_user(addr, "/fallback", "Bearer valid-alice").await, 200);
}

#[tokio::test]
async fn without_verification_skip_does_not_apply_the_rule() {
    let (addr, _) = server().await;
    assert_eq!(statuses(addr, "/skip", 5).await, [200; 5]);
    let alice = "Bearer valid-alice";
    assert_eq!(as_user(addr, "/skip", alice).await, 200);
    assert_eq!(as_user(addr, "/skip", alice).await, 200);
    assert_eq!(as_user(addr, "/skip", alice).await, 429);
}

#[tokio::test]
async fn without_verification_reject_answers_400() {
    let (addr, _) = server().await;
    let r = hit(addr, "/reject").await;
    assert_eq!(
        (r.status.as_u16(), r.body.as_str()),
        (400, r#"{"error":"bad_request"}"#)
    );
    assert_eq!(as_user(addr, "/reject", "Bearer forged-alice").await, 400);
    assert_eq!(as_user(addr, "/reject", "Bearer valid-alice").await, 200);
}

#[tokio::test]
async fn the_jwt_switch_makes_every_claim_missing() {
    let (addr, layer) = server().await;
    layer.limiter().switches().set_disable_jwt(true);
    assert_eq!(as_user(addr, "/reject", "Bearer valid-alice").await, 400);
    layer.limiter().switches().set_disable_jwt(false);
    assert_eq!(as_user(addr, "/reject", "Bearer valid-alice").await, 200);
}
