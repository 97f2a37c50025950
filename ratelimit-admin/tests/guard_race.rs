//! Two guards acting on the same reading: the compare-and-set publish lets
//! one return the rule; the other gets a conflict, publishes nothing and
//! reads again at its next tick.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use ratelimit_admin::guard::Guard;
use ratelimit_core::control::{
    BoxFuture, Control, ControlError, FleetView, MemoryControl, Published, Switch,
};
use ratelimit_core::rules::{Action, Rule};
use ratelimit_core::KeyDigest;
use support::flow::*;

/// A control that answers `current` with a reading taken earlier (a guard
/// on another instance that read before the first one published).
#[derive(Debug)]
struct Stale {
    inner: Arc<MemoryControl>,
    read: Published,
}

impl Control for Stale {
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>> {
        Box::pin(std::future::ready(Ok(Some(self.read.clone()))))
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
        self.inner.fleet()
    }
    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>> {
        self.inner.csrf_secret()
    }
}

#[tokio::test]
async fn of_two_guards_on_one_reading_one_rolls_back_and_the_other_conflicts() {
    let s = setup().await;
    s.publish_api().await;
    let (a, b) = (
        clients(&s.l, true, 1).remove(0),
        clients(&s.l, false, 1).remove(0),
    );
    minutes(&s.l, &s.clock, 10, &[&a, &b], 10).await;
    s.canary("50").await;
    let flood = clients(&s.l, true, 2).remove(1);
    minutes(&s.l, &s.clock, 5, &[&a, &b, &flood], 60).await;
    let reading = s.control.current().await.unwrap().unwrap();

    let first = s.guard().tick().await.unwrap();
    assert_eq!(first.len(), 1, "the first guard returns the rule");
    let after = s.control.current().await.unwrap().unwrap().version;
    assert_eq!(after, reading.version + 1);

    let stale = Arc::new(Stale {
        inner: s.control.clone(),
        read: reading,
    });
    let second = Guard::new(stale)
        .clock(s.clock.clone())
        .tick()
        .await
        .unwrap();
    assert_eq!(second, vec![], "a conflict: nothing published");
    let now = s.control.current().await.unwrap().unwrap();
    assert_eq!(now.version, after, "no second rollback version");
    assert_eq!(s.l.rules().get("api").unwrap().action, Action::Log);
}
