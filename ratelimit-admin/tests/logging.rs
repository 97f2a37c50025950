//! Every change is logged at info with what changed; refusals at warn.

mod support;

use ratelimit_admin::Admin;
use ratelimit_testkit::log_capture::LogCapture;
use support::*;
use tracing::Level;

#[tokio::test]
async fn changes_are_logged_at_info_with_what_changed() {
    let (capture, _guard) = LogCapture::install();
    let (l, _clock) = limiter();
    trip_login(&l, "203.0.113.7").await;
    let subject = l
        .subject_of("login", &req("203.0.113.7", "/login"))
        .unwrap()
        .to_hex();
    let app = Admin::new(l).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    assert!(
        capture.at(Level::INFO, "ratelimit_admin").is_empty(),
        "a page load changes nothing"
    );

    let form = format!("csrf={token}&switch=disable_jwt&on=true");
    send(&app, post("/switch", Some(&cookie), &form)).await;
    let form = format!("csrf={token}&rule=login&subject={subject}");
    send(&app, post("/reset", Some(&cookie), &form)).await;
    let info = capture.at(Level::INFO, "ratelimit_admin");
    assert_eq!(info.len(), 2, "{info:?}");
    assert!(
        info[0].contains("switch=\"disable_jwt\" from=false to=true"),
        "{}",
        info[0]
    );
    assert!(
        info[1].contains("rule=\"login\"") && info[1].contains(&subject),
        "{}",
        info[1]
    );

    send(
        &app,
        post("/switch", Some(&cookie), "switch=disable_jwt&on=false"),
    )
    .await;
    assert_eq!(
        capture.at(Level::INFO, "ratelimit_admin").len(),
        2,
        "a refusal changes nothing"
    );
    let warn = capture.at(Level::WARN, "ratelimit_admin");
    assert!(warn.iter().any(|l| l.contains("CSRF")), "{warn:?}");
}
