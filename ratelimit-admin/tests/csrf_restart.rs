//! Forms post to any instance after Valkey restarted without persistence
//! (issue 39, finding 3): the restart loses the fleet's CSRF secret, the
//! next instance to ask creates another, and every page takes it: on its
//! next render, or when a token fails against the secret it had.

mod support;

use std::sync::Arc;

use axum::Router;
use http::StatusCode;
use ratelimit_admin::Admin;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::ValkeyServer;
use ratelimit_valkey::control::ValkeyControl;
use support::*;

/// An admin page on the fleet's control at `url`.
fn instance(url: &str, prefix: &str) -> Router {
    let control = ValkeyControl::open(url, prefix).expect("control");
    let (limiter, _clock) = limiter();
    Admin::new(limiter)
        .control(Arc::new(control))
        .secure_cookie(false)
        .router()
}

/// The forms' token on a page.
fn token_of(page: &Answer) -> String {
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let at = page
        .body
        .find(r#"name="csrf" value=""#)
        .expect("a csrf field")
        + 19;
    page.body[at..at + 32].to_owned()
}

/// Posts the kill switch's form (`on`) with `cookie` and `token` to `app`.
async fn flip(app: &Router, cookie: &str, token: &str, on: bool) -> StatusCode {
    let form = format!("csrf={token}&switch=disable_rate_limiting&on={on}");
    send(app, post("/switch", Some(cookie), &form)).await.status
}

/// The page with the browser's cookie.
async fn page(app: &Router, cookie: &str) -> Answer {
    let req = http::Request::get("/")
        .header("cookie", cookie)
        .body(axum::body::Body::empty())
        .unwrap();
    send(app, req).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_post_to_any_instance_after_a_restart_without_persistence() {
    let mut server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let port = server.port().expect("port");
    let url = server.url().to_owned();
    let prefix = unique("csrf");
    let a = instance(&url, &prefix);
    let d = instance(&url, &prefix);

    // Before: a form rendered by A posts to D (both read the same secret).
    let first = send(&a, get("/")).await;
    let (cookie, token) = cookie_and_token(&first);
    assert_eq!(flip(&d, &cookie, &token, true).await, StatusCode::SEE_OTHER);

    server.kill();
    let _server = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));

    // An instance started after the restart creates the new secret.
    let e = instance(&url, &prefix);
    let e_token = token_of(&page(&e, &cookie).await);
    assert_ne!(e_token, token, "a new secret");
    // Its form posts to A and D, which had the old secret: each reads it
    // again when the token fails.
    assert_eq!(
        flip(&a, &cookie, &e_token, false).await,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        flip(&d, &cookie, &e_token, true).await,
        StatusCode::SEE_OTHER
    );
    // A and D render with the new secret: their forms post to E.
    for app in [&a, &d] {
        let t = token_of(&page(app, &cookie).await);
        assert_eq!(t, e_token, "the same nonce under the same secret");
        assert_eq!(flip(&e, &cookie, &t, false).await, StatusCode::SEE_OTHER);
    }
    // A token under no secret of the fleet is still refused everywhere.
    let forged = "0123456789abcdef0123456789abcdef";
    for app in [&a, &d, &e] {
        assert_eq!(
            flip(app, &cookie, forged, true).await,
            StatusCode::FORBIDDEN
        );
    }
}
