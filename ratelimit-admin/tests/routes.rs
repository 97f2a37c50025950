//! Each route through `oneshot`: the page, the JSON, the export, lifting a
//! penalty, flipping a switch, and what is refused.

mod support;

use http::StatusCode;
use ratelimit_admin::Admin;
use ratelimit_core::Outcome;
use support::*;

#[tokio::test]
async fn the_page_lists_a_penalty_and_a_log_rule_over_its_limit() {
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    l.check(&req("198.51.100.1", "/s<script>&'")).await;
    l.check(&req("198.51.100.1", "/s<script>&'")).await;
    let app = Admin::new(l.clone()).router();
    let page = send(&app, get("/")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let subject = l
        .subject_of("login", &req("203.0.113.7", "/login"))
        .unwrap();
    let shadow = l
        .subject_of("search.shadow", &req("198.51.100.1", "/"))
        .unwrap();
    let penalties = &page.body[page.body.find("Penalties in force").unwrap()..];
    assert!(penalties.contains(&subject.to_hex()), "{penalties}");
    assert!(penalties.contains("300 s"), "the penalty's time left");
    let attention = &page.body[page.body.find("Needs attention").unwrap()..];
    let attention = &attention[..attention.find("Penalties in force").unwrap()];
    assert!(attention.contains("search.shadow"), "{attention}");
    assert!(
        attention.contains(&shadow.to_hex()),
        "the subject it would hit"
    );
    assert!(
        !attention.contains("<code>login</code>"),
        "login blocks: not here"
    );
    assert!(page.headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("HttpOnly; SameSite=Strict; Secure"));
}

#[tokio::test]
async fn state_json_has_counts_attention_penalties_and_switches() {
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let app = Admin::new(l.clone()).router();
    let a = send(&app, get("/state.json")).await;
    assert_eq!(a.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let login = &v["rules"][0];
    assert_eq!(login["id"], "login");
    assert_eq!(login["counts"]["allowed"], 2);
    assert_eq!(login["counts"]["limited"], 1);
    assert_eq!(v["penalties"][0]["rule"], "login");
    assert_eq!(v["penalties"][0]["remaining_s"], 300);
    assert_eq!(v["switches"]["disable_rate_limiting"], false);
    assert_eq!(v["needs_attention"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn rules_added_at_run_time_are_listed_as_temporary() {
    let (l, _clock) = limiter();
    let rule = ratelimit_core::rules::RuleBuilder::new("incident-42")
        .key(["ip"])
        .fixed_window(1, std::time::Duration::from_secs(60))
        .expires_at_ms(l.now_ms() + 3_600_000)
        .build()
        .unwrap();
    l.add_temporary(rule).unwrap();
    let app = Admin::new(l).router();
    let v: serde_json::Value =
        serde_json::from_str(&send(&app, get("/state.json")).await.body).unwrap();
    let last = &v["rules"][2];
    assert_eq!(
        (&last["id"], &last["temporary"]),
        (&"incident-42".into(), &true.into())
    );
    assert_eq!(v["rules"][0]["temporary"], false);
    let page = send(&app, get("/")).await;
    assert!(page
        .body
        .contains("<code>incident-42</code></td><td>block (temporary)"));
}

#[tokio::test]
async fn rules_json_is_the_running_set_and_loads_back() {
    let (l, _clock) = limiter();
    let app = Admin::new(l.clone()).router();
    let a = send(&app, get("/rules.json")).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.headers["content-type"], "application/json");
    let back = ratelimit_core::rules::RuleSet::from_json(&a.body).unwrap();
    assert_eq!(back, l.rules());
}

#[tokio::test]
async fn lift_with_the_pages_token_ends_the_penalty() {
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let login = req("203.0.113.7", "/login");
    assert_eq!(l.check(&login).await.outcome, Outcome::Limited);
    let app = Admin::new(l.clone()).router();
    let page = send(&app, get("/")).await;
    let (cookie, token) = cookie_and_token(&page);
    let subject = l.subject_of("login", &login).unwrap().to_hex();
    let form = format!("csrf={token}&rule=login&subject={subject}");
    let a = send(&app, post("/reset", Some(&cookie), &form)).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(a.headers["location"], "/");
    assert!(
        l.check(&login).await.is_forward(),
        "penalty lifted, count forgotten"
    );
}

#[tokio::test]
async fn a_switch_flips_and_flips_back() {
    let (l, _clock) = limiter();
    let app = Admin::new(l.clone()).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    let on = format!("csrf={token}&switch=disable_rate_limiting&on=true");
    let a = send(&app, post("/switch", Some(&cookie), &on)).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert!(l.switches().rate_limiting_disabled());
    let page = send(&app, get("/")).await;
    assert!(
        page.body.contains(r#"class="on">ON"#),
        "the page shows it on"
    );
    for name in ["disable_config_blocking", "disable_jwt"] {
        let form = format!("csrf={token}&switch={name}&on=true");
        assert_eq!(
            send(&app, post("/switch", Some(&cookie), &form))
                .await
                .status,
            StatusCode::SEE_OTHER
        );
    }
    assert!(l.switches().config_blocking_disabled() && l.switches().jwt_disabled());
    let off = format!("csrf={token}&switch=disable_rate_limiting&on=false");
    send(&app, post("/switch", Some(&cookie), &off)).await;
    assert!(!l.switches().rate_limiting_disabled());
}

#[tokio::test]
async fn bad_forms_are_refused_and_change_nothing() {
    let (l, _clock) = limiter();
    let app = Admin::new(l.clone()).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    let cases = [
        (
            format!("csrf={token}&switch=disable_everything&on=true"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("csrf={token}&switch=disable_jwt&on=yes"),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (form, want) in cases {
        assert_eq!(
            send(&app, post("/switch", Some(&cookie), &form))
                .await
                .status,
            want,
            "{form}"
        );
    }
    let bad_subject = format!("csrf={token}&rule=login&subject=+1{}", "0".repeat(30));
    assert_eq!(
        send(&app, post("/reset", Some(&cookie), &bad_subject))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    let unknown = format!("csrf={token}&rule=nope&subject={}", "0".repeat(32));
    assert_eq!(
        send(&app, post("/reset", Some(&cookie), &unknown))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert!(!l.switches().jwt_disabled());
}

#[tokio::test]
async fn forms_post_under_the_mount_path() {
    let (l, _clock) = limiter();
    let app = axum::Router::new().nest("/ops/limits", Admin::new(l).secure_cookie(false).router());
    let page = send(&app, get("/ops/limits")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains(r#"action="/ops/limits/switch""#),
        "forms post under the mount"
    );
    let cookie = page.headers["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("Path=/ops/limits;") && !cookie.contains("Secure"),
        "{cookie}"
    );
    let (cookie, token) = cookie_and_token(&page);
    let form = format!("csrf={token}&switch=disable_jwt&on=true");
    let a = send(&app, post("/ops/limits/switch", Some(&cookie), &form)).await;
    assert_eq!(a.headers["location"], "/ops/limits");
}
