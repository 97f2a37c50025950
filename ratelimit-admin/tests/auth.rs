//! Mounted behind an auth `route_layer` that refuses, no admin route
//! serves anything or changes anything.

mod support;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use http::StatusCode;
use ratelimit_admin::Admin;
use support::*;

async fn refuse_all(_req: Request, _next: Next) -> Response {
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .body("login first".into())
        .unwrap()
}

async fn operators_only(req: Request, next: Next) -> Response {
    if req.headers().get("x-operator").is_some() {
        next.run(req).await
    } else {
        refuse_all(req, next).await
    }
}

#[tokio::test]
async fn a_refusing_auth_layer_blocks_every_admin_route() {
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let subject = l
        .subject_of("login", &req("203.0.113.7", "/login"))
        .unwrap()
        .to_hex();
    // A real token pair, from an unprotected router of the same admin: the
    // refusal below is the auth layer's, not the CSRF check's.
    let admin = Admin::new(l.clone());
    let admin_router = admin.router();
    let open = admin_router.clone();
    let (cookie, token) = cookie_and_token(&send(&open, get("/")).await);
    let app = Router::new().nest(
        "/admin",
        admin_router.route_layer(middleware::from_fn(refuse_all)),
    );
    for uri in ["/admin", "/admin/state.json", "/admin/rules.json"] {
        let a = send(&app, get(uri)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{uri}");
        assert_eq!(a.body, "login first", "{uri}: nothing of the page");
    }
    let posts = [
        (
            "/admin/reset",
            format!("csrf={token}&rule=login&subject={subject}"),
        ),
        (
            "/admin/switch",
            format!("csrf={token}&switch=disable_rate_limiting&on=true"),
        ),
    ];
    for (uri, form) in &posts {
        let a = send(&app, post(uri, Some(&cookie), form)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{uri}");
    }
    assert!(!l.switches().rate_limiting_disabled());
    assert!(
        !l.check(&req("203.0.113.7", "/login")).await.is_forward(),
        "penalty kept"
    );
}

#[tokio::test]
async fn the_same_routes_serve_an_operator() {
    let (l, _clock) = limiter();
    let app = Router::new().nest(
        "/admin",
        Admin::new(l)
            .router()
            .route_layer(middleware::from_fn(operators_only)),
    );
    let with = |uri: &str| {
        http::Request::get(uri)
            .header("x-operator", "1")
            .body(axum::body::Body::empty())
            .unwrap()
    };
    for uri in ["/admin", "/admin/state.json", "/admin/rules.json"] {
        assert_eq!(send(&app, with(uri)).await.status, StatusCode::OK, "{uri}");
        assert_eq!(
            send(&app, get(uri)).await.status,
            StatusCode::UNAUTHORIZED,
            "{uri}"
        );
    }
}
