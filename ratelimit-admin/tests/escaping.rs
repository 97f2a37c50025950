//! Every value on the page is HTML-escaped.
//!
//! The templates (maud) escape `&`, `<`, `>` and `"`, and quote every
//! attribute with `"`: a `'` in a value is then plain text.

mod support;

use ratelimit_admin::Admin;
use support::*;

#[tokio::test]
async fn markup_in_rules_reaches_the_page_escaped() {
    let (l, _clock) = limiter();
    l.check(&req("198.51.100.1", "/s<script>&'")).await;
    l.check(&req("198.51.100.1", "/s<script>&'")).await;
    let page = send(&Admin::new(l).router(), get("/")).await;
    assert!(
        !page.body.contains("<script"),
        "no raw markup from the rules"
    );
    assert!(
        page.body.contains("/s&lt;script&gt;&amp;'"),
        "the expression, escaped"
    );
    assert!(
        page.body.contains("&quot;/s&lt;script&gt;"),
        "the export's quotes, escaped"
    );
}

#[tokio::test]
async fn the_mount_path_is_escaped_in_forms() {
    let (l, _clock) = limiter();
    let app = axum::Router::new().nest("/x&y'z", Admin::new(l).router());
    let page = send(&app, get("/x&y'z")).await;
    assert_eq!(page.status, http::StatusCode::OK);
    assert!(
        page.body.contains(r#"action="/x&amp;y'z/switch""#),
        "{}",
        page.body
    );
    assert!(!page.body.contains("/x&y'z"), "never raw");
}
