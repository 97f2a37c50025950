//! Every POST without the cookie's token is refused with 403 and changes
//! nothing.

mod support;

use http::StatusCode;
use ratelimit_admin::Admin;
use ratelimit_core::Outcome;
use support::*;

#[tokio::test]
async fn posts_without_a_valid_token_are_refused() {
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let login = req("203.0.113.7", "/login");
    let subject = l.subject_of("login", &login).unwrap().to_hex();
    let admin = Admin::new(l.clone());
    let app = admin.clone().router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    // A token from another instance (another secret), for its own cookie.
    let other = admin.router();
    let (other_cookie, other_token) = cookie_and_token(&send(&other, get("/")).await);
    let fresh_cookie = "ratelimit_admin_csrf=00000000000000000000000000000000";
    let cases: Vec<(Option<&str>, String)> = vec![
        (None, format!("csrf={token}")),
        (Some(&cookie), String::new()),
        (Some(&cookie), "csrf=".into()),
        (Some(&cookie), format!("csrf={}", &token[..31])),
        (Some(&cookie), format!("csrf={other_token}")),
        (Some(&other_cookie), format!("csrf={token}")),
        (Some(fresh_cookie), format!("csrf={token}")),
    ];
    for (c, csrf) in &cases {
        let reset = format!("{csrf}&rule=login&subject={subject}");
        let a = send(&app, post("/reset", *c, &reset)).await;
        assert_eq!(
            a.status,
            StatusCode::FORBIDDEN,
            "reset, cookie {c:?}, {csrf}"
        );
        let switch = format!("{csrf}&switch=disable_rate_limiting&on=true");
        let a = send(&app, post("/switch", *c, &switch)).await;
        assert_eq!(
            a.status,
            StatusCode::FORBIDDEN,
            "switch, cookie {c:?}, {csrf}"
        );
    }
    // A body that is not a form at all.
    let raw = http::Request::post("/switch")
        .header("cookie", &cookie)
        .body(axum::body::Body::from("{}"))
        .unwrap();
    assert_eq!(send(&app, raw).await.status, StatusCode::FORBIDDEN);
    assert!(!l.switches().rate_limiting_disabled(), "no switch flipped");
    assert_eq!(
        l.check(&login).await.outcome,
        Outcome::Limited,
        "penalty kept"
    );
    // And the right pair works, so the refusals above were the token's.
    let ok = format!("csrf={token}&switch=disable_rate_limiting&on=true");
    assert_eq!(
        send(&app, post("/switch", Some(&cookie), &ok)).await.status,
        StatusCode::SEE_OTHER
    );
}

#[tokio::test]
async fn a_get_cannot_change_anything() {
    let (l, _clock) = limiter();
    let app = Admin::new(l.clone()).router();
    for uri in ["/switch?switch=disable_jwt&on=true", "/reset"] {
        let a = send(&app, get(uri)).await;
        assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
    }
    assert!(!l.switches().jwt_disabled());
}

/// Issue 27, item 9: under a path parameter the mount path comes from the
/// request, and a `;` in it must not add attributes to the cookie.
#[tokio::test]
async fn a_path_parameter_cannot_add_cookie_attributes() {
    let (l, _clock) = limiter();
    let app = axum::Router::new().nest("/t/{tenant}/admin", Admin::new(l).router());
    let page = send(&app, get("/t/acme;Domain=127.0.0.1;Path=/admin")).await;
    assert_eq!(page.status, StatusCode::OK);
    let cookie = page.headers["set-cookie"].to_str().unwrap();
    let attributes: Vec<&str> = cookie.split(';').map(str::trim).collect();
    assert_eq!(
        attributes,
        [
            attributes[0],
            "Path=/t/acme%3BDomain=127.0.0.1%3BPath=/admin",
            "HttpOnly",
            "SameSite=Strict",
            "Secure"
        ],
        "{cookie}"
    );
    // An ordinary tenant keeps its own path, and its forms work.
    let page = send(&app, get("/t/acme/admin")).await;
    let set = page.headers["set-cookie"].to_str().unwrap();
    assert!(set.contains("; Path=/t/acme/admin; "), "{set}");
    let (cookie, token) = cookie_and_token(&page);
    let form = format!("csrf={token}&switch=disable_jwt&on=true");
    let a = send(&app, post("/t/acme/admin/switch", Some(&cookie), &form)).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
}
