//! The page shows each instance with its running version and last
//! report, which have not applied the published version, and a held
//! publish naming the instance in the way: with a control whose fleet is
//! written here.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use http::StatusCode;
use ratelimit_admin::Admin;
use ratelimit_core::control::{
    BoxFuture, Control, ControlError, FleetView, InstanceReport, Published, RuleCounts, Switch,
    TopSubject,
};
use ratelimit_core::rules::Rule;
use ratelimit_core::KeyDigest;
use support::*;

/// A fleet of three at version 4: edge-1 runs it, edge-2 still runs 3,
/// edge-3 refused it. Publishes are held by edge-3's schema.
#[derive(Debug)]
struct ThreeInstances {
    now_ms: u64,
}

impl ThreeInstances {
    fn published(&self) -> Published {
        Published {
            version: 4,
            schema: 1,
            json: "[]".into(),
            note: "alice: tighter login".into(),
            at_ms: self.now_ms - 30_000,
            annotations: BTreeMap::new(),
        }
    }
}

fn ready<T: Send + 'static>(v: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(v))
}

impl Control for ThreeInstances {
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>> {
        ready(Ok(Some(self.published())))
    }
    fn history(&self, _: usize) -> BoxFuture<'_, Result<Vec<Published>, ControlError>> {
        ready(Ok(vec![self.published()]))
    }
    fn publish<'a>(
        &'a self,
        _: u64,
        _: &'a str,
        _: &'a str,
        _: BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<u64, ControlError>> {
        ready(Err(ControlError::Held {
            needs_schema: 1,
            instances: vec![("edge-3".into(), 0)],
        }))
    }
    fn set_switch(&self, _: Switch, _: bool) -> BoxFuture<'_, Result<(), ControlError>> {
        ready(Ok(()))
    }
    fn lift<'a>(&'a self, _: &'a str, _: KeyDigest) -> BoxFuture<'a, Result<(), ControlError>> {
        ready(Ok(()))
    }
    fn add_temporary<'a>(&'a self, _: Rule, _: &'a str) -> BoxFuture<'a, Result<(), ControlError>> {
        ready(Ok(()))
    }
    fn remove_temporary<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<bool, ControlError>> {
        ready(Ok(false))
    }
    fn fleet(&self) -> BoxFuture<'_, Result<FleetView, ControlError>> {
        // Each instance saw the same client over the log rule's limit.
        let shadow = |n: u64| RuleCounts {
            rule: "search.shadow".into(),
            requests: n + 1,
            allowed: 1,
            would_limit: n,
            ..RuleCounts::default()
        };
        let top = |n: u64| TopSubject {
            rule: "search.shadow".into(),
            subject: KeyDigest([9; 16]),
            label: Some("ip=198.51.100.9".into()),
            count: n,
        };
        let at = |id: &str, v, ago: u64, refused: Option<(u64, String)>| InstanceReport {
            id: id.into(),
            running_version: v,
            schema: 1,
            last_report_ms: self.now_ms - ago,
            refused,
            rules: vec![shadow(ago / 1000)],
            top: vec![top(ago / 1000)],
            ..InstanceReport::default()
        };
        ready(Ok(FleetView {
            published: Some(self.published()),
            instances: vec![
                at("edge-1", 4, 1_000, None),
                at("edge-2", 3, 7_000, None),
                at(
                    "edge-3",
                    3,
                    2_000,
                    Some((4, "rule \"login\": bad <limit>".into())),
                ),
            ],
            ..FleetView::default()
        }))
    }
    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>> {
        ready(Ok([7; 32]))
    }
}

#[tokio::test]
async fn each_instance_shows_its_version_and_the_ones_behind_are_named() {
    let (l, _clock) = limiter();
    let control = Arc::new(ThreeInstances { now_ms: l.now_ms() });
    let app = Admin::new(l).control(control).router();
    let page = send(&app, get("/")).await.body;
    let fleet = &page[page.find("<h2>Fleet").unwrap()..page.find("Needs attention").unwrap()];
    assert!(
        fleet.contains("version <b>4</b> — alice: tighter login"),
        "{fleet}"
    );
    assert!(fleet.contains("3 instance(s)"), "{fleet}");
    assert!(
        fleet.contains("not yet on version 4: edge-2, edge-3"),
        "{fleet}"
    );
    let row = |id: &str| {
        let at = fleet.find(&format!("<code>{id}</code>")).unwrap();
        fleet[at..at + fleet[at..].find("</tr>").unwrap()].to_owned()
    };
    assert!(row("edge-1").contains("up to date") && row("edge-1").contains("1 s ago"));
    assert!(
        row("edge-2").contains("has not applied version 4"),
        "{}",
        row("edge-2")
    );
    assert!(row("edge-2").contains("7 s ago"));
    assert!(
        row("edge-3").contains("refused version 4: rule &quot;login&quot;: bad &lt;limit&gt;"),
        "{}",
        row("edge-3")
    );
}

#[tokio::test]
async fn needs_attention_sums_the_fleet_and_shows_its_clients() {
    let (l, _clock) = limiter();
    let control = Arc::new(ThreeInstances { now_ms: l.now_ms() });
    let page = send(&Admin::new(l).control(control).router(), get("/"))
        .await
        .body;
    let attention =
        &page[page.find("Needs attention").unwrap()..page.find("Penalties in force").unwrap()];
    // 1 + 7 + 2 over the three instances; this instance saw none.
    assert!(
        attention.contains(r#"<td class="n">10</td>"#),
        "{attention}"
    );
    assert!(
        attention.contains(&format!(
            "ip=198.51.100.9</span> <code>{}</code> (10)",
            KeyDigest([9; 16]).to_hex()
        )),
        "{attention}"
    );
}

#[tokio::test]
async fn a_held_publish_names_the_instance_in_the_way() {
    let (l, _clock) = limiter();
    let control = Arc::new(ThreeInstances { now_ms: l.now_ms() });
    let app = Admin::new(l.clone()).control(control).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    let json = l.rules().to_json();
    let form = format!(
        "csrf={token}&version=4&note=x&json={}",
        json.bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<String>()
    );
    let a = send(&app, post("/publish", Some(&cookie), &form)).await;
    assert_eq!(a.status, StatusCode::CONFLICT);
    assert!(
        a.body
            .contains("held: the set needs schema 1, and edge-3 reads schema 0"),
        "{}",
        &a.body[a.body.find("Draft").unwrap()..]
    );
}
