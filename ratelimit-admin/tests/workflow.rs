//! The operator's workflow through the page's forms, on one process's
//! control (`MemoryControl`): publish a new rule (it lands in log), watch
//! it, start a canary, let the rollback guard judge it against traffic
//! that stays the same and traffic that changes, roll back to a version.

mod support;

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use ratelimit_admin::guard::{Guard, RolledBack};
use ratelimit_admin::Admin;
use ratelimit_core::control::{Control, MemoryControl};
use ratelimit_core::rules::Action;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use support::*;

const API: &str = r#"{"id": "api", "expression": "http.request.uri.path eq \"/api\"",
   "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]}"#;

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `n` requests to /api from `ip`.
async fn hit(l: &Limiter, ip: &str, n: usize) {
    let r = RequestAttrs::new(ip.parse().unwrap()).with_path("/api");
    for _ in 0..n {
        l.check(&r).await;
    }
}

/// `minutes` minutes of traffic: each minute, `per_min` requests from each
/// of `ips`.
async fn minutes(l: &Limiter, clock: &ManualClock, minutes: u32, ips: &[&str], per_min: usize) {
    for _ in 0..minutes {
        for ip in ips {
            hit(l, ip, per_min).await;
        }
        clock.advance(Duration::from_secs(60));
    }
}

/// The first addresses of 203.0.113.0/24 whose subject a 50% canary of
/// the `api` rule takes (`inside`) or leaves out.
fn clients(l: &Limiter, inside: bool, n: usize) -> Vec<String> {
    let mut rule = (**l.rules().get("api").unwrap()).clone();
    rule.canary_bp = Some(5_000);
    (1..=254)
        .map(|i| format!("203.0.113.{i}"))
        .filter(|ip| {
            let r = RequestAttrs::new(ip.parse().unwrap()).with_path("/api");
            rule.canary_includes(&l.subject_of("api", &r).unwrap()) == inside
        })
        .take(n)
        .collect()
}

struct Setup {
    l: Limiter,
    clock: ManualClock,
    control: Arc<MemoryControl>,
    app: axum::Router,
    cookie: String,
    token: String,
}

async fn setup() -> Setup {
    let (l, clock) = limiter();
    let control = Arc::new(MemoryControl::new(l.clone(), "edge-1"));
    let app = Admin::new(l.clone()).control(control.clone()).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    Setup {
        l,
        clock,
        control,
        app,
        cookie,
        token,
    }
}

impl Setup {
    async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let mut all = vec![("csrf", self.token.as_str())];
        all.extend_from_slice(fields);
        send(&self.app, post(path, Some(&self.cookie), &form(&all))).await
    }

    async fn version(&self) -> String {
        let v = self
            .control
            .current()
            .await
            .unwrap()
            .map_or(0, |p| p.version);
        v.to_string()
    }

    /// The published set with the `api` rule added (as the draft says: no
    /// action, i.e. block) and published from the page.
    async fn publish_api(&self) {
        let mut rules: Vec<serde_json::Value> =
            serde_json::from_str(&self.l.rules().to_json()).unwrap();
        rules.push(serde_json::from_str(API).unwrap());
        let json = serde_json::to_string(&rules).unwrap();
        let checked = self.post("/check", &[("json", &json)]).await;
        assert_eq!(checked.status, StatusCode::OK);
        assert!(
            checked.body.contains("rule &quot;api&quot; is new"),
            "the check says it lands in log"
        );
        let v = self.version().await;
        let a = self
            .post(
                "/publish",
                &[("json", &json), ("note", "alice: api"), ("version", &v)],
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }

    async fn canary(&self, percent: &str) {
        let v = self.version().await;
        let a = self
            .post(
                "/canary",
                &[("rule", "api"), ("percent", percent), ("version", &v)],
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }

    fn guard(&self) -> Guard {
        Guard::new(self.control.clone()).clock(self.clock.clone())
    }
}

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
