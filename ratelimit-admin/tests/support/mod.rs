//! Shared helpers: a limiter with a blocking rule (penalty) and a log rule,
//! and requests through the router with `oneshot`.
#![allow(dead_code, unreachable_pub)]

use axum::body::Body;
use axum::Router;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use tower::ServiceExt;

pub mod flow;

pub const RULES: &str = r#"[
  {"id": "login", "expression": "http.request.uri.path eq \"/login\"",
   "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"],
   "penalty": "5m"},
  {"id": "search.shadow", "expression": "http.request.uri.path eq \"/s<script>&'\"",
   "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"],
   "action": "log"}
]"#;

pub fn limiter() -> (Limiter, ManualClock) {
    let clock = ManualClock::new(1_767_225_600_000);
    let rules = RuleSet::from_json(RULES).expect("rules load");
    (Limiter::builder(rules).clock(clock.clone()).build(), clock)
}

pub fn req(ip: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().unwrap()).with_path(path)
}

/// Three logins from one IP: the third is limited and starts the penalty.
pub async fn trip_login(l: &Limiter, ip: &str) {
    for _ in 0..3 {
        l.check(&req(ip, "/login")).await;
    }
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

pub async fn send(app: &Router, req: Request<Body>) -> Answer {
    let res = app.clone().oneshot(req).await.expect("infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).expect("utf-8"),
    }
}

pub fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

pub fn post(uri: &str, cookie: Option<&str>, form: &str) -> Request<Body> {
    let mut b = Request::post(uri).header("content-type", "application/x-www-form-urlencoded");
    if let Some(c) = cookie {
        b = b.header("cookie", c);
    }
    b.body(Body::from(form.to_owned())).unwrap()
}

/// The `name=value` of the page's Set-Cookie, and the forms' token.
pub fn cookie_and_token(page: &Answer) -> (String, String) {
    let set = page.headers["set-cookie"].to_str().unwrap();
    let cookie = set.split(';').next().unwrap().to_owned();
    let at = page
        .body
        .find(r#"name="csrf" value=""#)
        .expect("a csrf field")
        + 19;
    (cookie, page.body[at..at + 32].to_owned())
}
