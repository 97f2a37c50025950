//! The operator's workflow through the page's forms, on one process's
//! control (`MemoryControl`): publish a new rule (it lands in log), watch
//! it, start a canary, let the rollback guard judge it against traffic
//! that stays the same and traffic that changes, roll back to a version.

mod support;

use std::time::Duration;

use http::StatusCode;
use ratelimit_admin::guard::RolledBack;
use ratelimit_admin::Admin;
use ratelimit_core::control::Control;
use ratelimit_core::rules::Action;
use support::flow::*;
use support::*;

#[tokio::test]
async fn a_new_rule_lands_in_log_and_a_canary_keeps_while_traffic_stays_the_same() {
    let s = setup().await;
    s.publish_api().await;
    assert_eq!(s.l.rules().get("api").unwrap().action, Action::Log);
    // Log phase: ten minutes, two clients at 10 a minute, 5 over each;
    // the canary will take one and leave the other.
    let (a, b) = (
        clients(&s.l, true, 1).remove(0),
        clients(&s.l, false, 1).remove(0),
    );
    minutes(&s.l, &s.clock, 10, &[&a, &b], 10).await;
    let page = send(&s.app, get("/")).await.body;
    let attention =
        &page[page.find("Needs attention").unwrap()..page.find("Penalties in force").unwrap()];
    assert!(
        attention.contains(&format!("ip={a}")),
        "the clients it would hit: {attention}"
    );

    s.canary("50").await;
    let current = s.control.current().await.unwrap().unwrap();
    assert_eq!(
        current.annotations["guard.api.baseline"],
        "200,100,2,600000"
    );
    assert_eq!(s.l.rules().get("api").unwrap().canary_bp, Some(5_000));
    // The same traffic under the canary: a is blocked, b only logged.
    minutes(&s.l, &s.clock, 10, &[&a, &b], 10).await;
    assert_eq!(s.guard().tick().await.unwrap(), vec![]);
    assert_eq!(
        s.l.rules().get("api").unwrap().canary_bp,
        Some(5_000),
        "kept"
    );
    // Promote: blocks for everyone, the guard no longer watches it.
    let v = s.version().await;
    let a2 = s
        .post("/promote", &[("rule", "api"), ("version", &v)])
        .await;
    assert_eq!(a2.status, StatusCode::SEE_OTHER);
    let api = s.l.rules().get("api").cloned().unwrap();
    assert_eq!((api.action, api.canary_bp), (Action::Block, None));
}

#[tokio::test]
async fn the_guard_returns_a_canary_to_log_when_traffic_changes_and_says_why() {
    let s = setup().await;
    s.publish_api().await;
    let (a, b) = (
        clients(&s.l, true, 1).remove(0),
        clients(&s.l, false, 1).remove(0),
    );
    minutes(&s.l, &s.clock, 10, &[&a, &b], 10).await;
    s.canary("50").await;
    let before = s.version().await;
    // A new client in the canary floods: 60 a minute, 55 blocked.
    let flood = clients(&s.l, true, 2).remove(1);
    minutes(&s.l, &s.clock, 5, &[&a, &b, &flood], 10).await;
    hit(&s.l, &flood, 300).await;
    let fired: Vec<RolledBack> = s.guard().tick().await.unwrap();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].rule, "api");
    let api = s.l.rules().get("api").cloned().unwrap();
    assert_eq!(
        (api.action, api.canary_bp),
        (Action::Log, None),
        "back to log"
    );
    let now = s.control.current().await.unwrap().unwrap();
    assert_eq!(now.version, before.parse::<u64>().unwrap() + 1);
    assert!(
        now.note.starts_with("rollback guard: rule \"api\""),
        "{}",
        now.note
    );
    assert!(now.annotations["rolled_back.api"].contains("per minute"));
    let page = send(&s.app, get("/")).await.body;
    let attention =
        &page[page.find("Needs attention").unwrap()..page.find("Penalties in force").unwrap()];
    assert!(
        attention.contains("returned by the rollback guard"),
        "{attention}"
    );
    // A second tick has nothing left to do.
    assert_eq!(s.guard().tick().await.unwrap(), vec![]);

    // Roll back to version 1 (api in log, as first published) from History.
    let v = s.version().await;
    let r = s.post("/rollback", &[("to", "1"), ("version", &v)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let now = s.control.current().await.unwrap().unwrap();
    assert_eq!(now.note, "rollback to version 1");
    let first = s.control.history(100).await.unwrap().pop().unwrap();
    assert_eq!(now.json, first.json);
}

#[tokio::test]
async fn a_quiet_log_phase_gives_the_guard_nothing_to_act_on() {
    let s = setup().await;
    s.publish_api().await;
    s.clock.advance(Duration::from_secs(600));
    s.canary("50").await;
    let flood = clients(&s.l, true, 1).remove(0);
    hit(&s.l, &flood, 500).await;
    s.clock.advance(Duration::from_secs(300));
    assert_eq!(s.guard().tick().await.unwrap(), vec![]);
    assert_eq!(s.l.rules().get("api").unwrap().canary_bp, Some(5_000));
}

#[tokio::test]
async fn a_stale_form_gets_a_conflict_naming_the_version_and_keeps_the_draft() {
    let s = setup().await;
    s.publish_api().await;
    let json =
        s.l.rules()
            .to_json()
            .replace("\"limit\": 5", "\"limit\": 7");
    let a = s
        .post(
            "/publish",
            &[("json", &json), ("note", "bob"), ("version", "0")],
        )
        .await;
    assert_eq!(a.status, StatusCode::CONFLICT);
    assert!(a.body.contains("version 1 is published"), "{}", a.body);
    assert!(a.body.contains("&quot;limit&quot;: 7"), "the draft is kept");
    // Straight from log to block, without a canary: refused, naming it.
    let block =
        s.l.rules()
            .to_json()
            .replace("\"action\": \"log\"", "\"action\": \"block\"");
    let a = s
        .post("/publish", &[("json", &block), ("version", "1")])
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(a.body.contains("field &quot;action&quot;"), "{}", a.body);
}

#[tokio::test]
async fn a_form_from_one_instance_posts_to_another_through_the_shared_secret() {
    let s = setup().await;
    // A second instance's page over the same control.
    let other = Admin::new(s.l.clone()).control(s.control.clone()).router();
    let f = form(&[
        ("csrf", &s.token),
        ("switch", "disable_jwt"),
        ("on", "true"),
    ]);
    let a = send(&other, post("/switch", Some(&s.cookie), &f)).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert!(s.l.switches().jwt_disabled());
    // Another fleet's control has another secret.
    let stranger = Admin::new(s.l.clone()).router();
    let a = send(&stranger, post("/switch", Some(&s.cookie), &f)).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_page_shows_each_instance_and_its_running_version() {
    let s = setup().await;
    s.publish_api().await;
    let page = send(&s.app, get("/")).await.body;
    let fleet = &page[page.find("<h2>Fleet").unwrap()..];
    assert!(fleet.contains("<code>edge-1</code>"), "{fleet}");
    assert!(fleet.contains("up to date"), "{fleet}");
    assert!(page.contains("Roll back to 1") || page.contains("running"));
}
