//! The page shows what each instance has applied besides the published
//! set: the switches, the last lift, the rules added at run time (listed
//! with their expiry and note), and the parts of the control state that
//! cannot be read (issue 39, findings 2 and 6).

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ratelimit_admin::Admin;
use ratelimit_core::control::{
    BoxFuture, Control, ControlError, FleetView, InstanceReport, MemoryControl, Published, Switch,
    SwitchState,
};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::KeyDigest;
use support::*;

fn surge(id: &str, expires_at_ms: u64) -> Rule {
    RuleBuilder::new(id)
        .expression(r#"http.request.uri.path eq "/""#)
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(expires_at_ms)
        .build()
        .unwrap()
}

/// The page's section `from` up to the next `<h2>`.
fn section<'a>(page: &'a str, from: &str) -> &'a str {
    let at = page.find(from).unwrap_or_else(|| panic!("no {from}"));
    let end = page[at + 4..]
        .find("<h2")
        .map_or(page.len(), |e| at + 4 + e);
    &page[at..end]
}

#[tokio::test]
async fn rules_added_at_run_time_are_listed_with_expiry_and_note() {
    let (l, _clock) = limiter();
    let now = l.now_ms();
    let control = MemoryControl::new(l.clone(), "solo");
    control
        .add_temporary(surge("surge-1", now + 90_000), "autopilot: <flood> on /")
        .await
        .unwrap();
    let page = send(&Admin::new(l).control(Arc::new(control)).router(), get("/"))
        .await
        .body;
    let list = section(&page, "<h2>Rules added at run time");
    let row = &list[list.find("<code>surge-1</code>").expect("listed")..];
    assert!(row.contains("90 s"), "{list}");
    assert!(row.contains("autopilot: &lt;flood&gt; on /"), "{list}");
    assert!(row.contains("runs everywhere"), "{list}");
}

#[tokio::test]
async fn remove_takes_a_rule_added_at_run_time_off_and_needs_the_token() {
    let (l, _clock) = limiter();
    let control = MemoryControl::new(l.clone(), "solo");
    control
        .add_temporary(surge("surge-1", l.now_ms() + 90_000), "autopilot")
        .await
        .unwrap();
    let app = Admin::new(l.clone()).control(Arc::new(control)).router();
    let page = send(&app, get("/")).await;
    let (cookie, token) = cookie_and_token(&page);
    let forged = send(
        &app,
        post("/remove_temporary", Some(&cookie), "rule=surge-1"),
    )
    .await;
    assert_eq!(forged.status, http::StatusCode::FORBIDDEN);
    assert_eq!(l.temporary_rules().len(), 1);
    let form = format!("csrf={token}&rule=surge-1");
    let done = send(&app, post("/remove_temporary", Some(&cookie), &form)).await;
    assert_eq!(done.status, http::StatusCode::SEE_OTHER, "{}", done.body);
    assert!(l.temporary_rules().is_empty());
    let again = send(&app, post("/remove_temporary", Some(&cookie), &form)).await;
    assert_eq!(again.status, http::StatusCode::NOT_FOUND);
}

/// A control whose fleet is written here.
#[derive(Debug)]
struct Written {
    inner: MemoryControl,
    view: FleetView,
}

impl Control for Written {
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>> {
        self.inner.current()
    }
    fn history(&self, n: usize) -> BoxFuture<'_, Result<Vec<Published>, ControlError>> {
        self.inner.history(n)
    }
    fn publish<'a>(
        &'a self,
        from: u64,
        json: &'a str,
        note: &'a str,
        ann: BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<u64, ControlError>> {
        self.inner.publish(from, json, note, ann)
    }
    fn set_switch(&self, s: Switch, on: bool) -> BoxFuture<'_, Result<(), ControlError>> {
        self.inner.set_switch(s, on)
    }
    fn lift<'a>(&'a self, r: &'a str, s: KeyDigest) -> BoxFuture<'a, Result<(), ControlError>> {
        self.inner.lift(r, s)
    }
    fn add_temporary<'a>(&'a self, r: Rule, n: &'a str) -> BoxFuture<'a, Result<(), ControlError>> {
        self.inner.add_temporary(r, n)
    }
    fn remove_temporary<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ControlError>> {
        self.inner.remove_temporary(id)
    }
    fn fleet(&self) -> BoxFuture<'_, Result<FleetView, ControlError>> {
        Box::pin(std::future::ready(Ok(self.view.clone())))
    }
    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>> {
        self.inner.csrf_secret()
    }
}

#[tokio::test]
async fn the_instances_behind_on_switches_lifts_and_rules_are_marked() {
    let (l, _clock) = limiter();
    let now = l.now_ms();
    let inner = MemoryControl::new(l.clone(), "solo");
    inner
        .add_temporary(surge("surge-1", now + 60_000), "autopilot")
        .await
        .unwrap();
    let mut view = inner.fleet().await.unwrap();
    let mut kill = SwitchState::default();
    kill.set(Switch::DisableRateLimiting, true);
    let at =
        |id: &str, switches, lift_seq, temporary: Vec<(String, u64)>, problems: Vec<String>| {
            InstanceReport {
                id: id.into(),
                last_report_ms: now,
                switches: Some(switches),
                lift_seq,
                temporary,
                problems,
                ..InstanceReport::default()
            }
        };
    let bad =
        "rl:control{ctl}:lift_seq holds a list: it should hold the last lift's number".to_owned();
    view.switches = kill;
    view.lift_seq = 4;
    view.instances = vec![
        at(
            "edge-1",
            kill,
            4,
            vec![("surge-1".into(), now + 60_000)],
            vec![],
        ),
        at(
            "edge-2",
            SwitchState::default(),
            3,
            vec![("kept".into(), now + 30_000)],
            vec![bad.clone()],
        ),
    ];
    let control = Arc::new(Written { inner, view });
    let page = send(&Admin::new(l).control(control).router(), get("/"))
        .await
        .body;
    let fleet = section(&page, "<h2>Fleet");
    let table = &fleet[fleet.find("<table").unwrap()..];
    let row = |id: &str| {
        let at = table.find(&format!("<code>{id}</code>")).unwrap();
        table[at..at + table[at..].find("</tr>").unwrap()].to_owned()
    };
    assert!(
        !row("edge-1").contains("has not applied the switches"),
        "{}",
        row("edge-1")
    );
    assert!(
        row("edge-2").contains("has not applied the switches"),
        "{}",
        row("edge-2")
    );
    assert!(
        row("edge-2").contains("has not applied lift 4 (at 3)"),
        "{}",
        row("edge-2")
    );
    assert!(
        fleet.contains("edge-2</code> cannot apply: rl:control{ctl}:lift_seq holds a list"),
        "{fleet}"
    );
    let list = section(&page, "<h2>Rules added at run time");
    let surge_row = &list[list.find("<code>surge-1</code>").unwrap()..];
    assert!(
        surge_row.contains("edge-2"),
        "not running on edge-2: {list}"
    );
    let kept = &list[list.find("<code>kept</code>").expect("what instances kept")..];
    assert!(
        kept.contains("runs on edge-2 until it expires") && kept.contains("30 s"),
        "{list}"
    );
}
