//! The control in one process: the fleet is one [`Limiter`], no Valkey.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::{
    BoxFuture, Control, ControlError, FleetView, InstanceReport, Published, Switch, SwitchState,
    TemporaryRule,
};
use crate::limiter::AdminError;
use crate::rules::Rule;
use crate::{KeyDigest, Limiter};

/// [`Control`] over one in-process [`Limiter`]: a publish applies at once,
/// a switch flips this limiter's, a lift resets its state and caches, and
/// the fleet is this one instance. The quickstart's control: no server.
///
/// Versions start at 0 (the limiter's start-up set) and live as long as
/// this value; the CSRF secret is drawn from the operating system's random
/// source when it is made.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use ratelimit_core::control::{Control, MemoryControl};
/// use ratelimit_core::rules::RuleSet;
/// use ratelimit_core::Limiter;
///
/// let control = MemoryControl::new(Limiter::new(RuleSet::default()), "dev");
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// control.publish(0, "[]", "first", BTreeMap::new()).await.unwrap();
/// control.publish(1, "[]", "second", BTreeMap::new()).await.unwrap();
/// let notes: Vec<String> = control.history(10).await.unwrap().into_iter().map(|p| p.note).collect();
/// assert_eq!(notes, ["second", "first"]);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct MemoryControl {
    limiter: Limiter,
    id: Arc<str>,
    history: Arc<Mutex<VecDeque<Published>>>,
    /// The note and time of each rule added at run time, by id.
    notes: Arc<Mutex<BTreeMap<String, (String, u64)>>>,
    secret: Option<[u8; 32]>,
}

impl MemoryControl {
    /// The control of `limiter`, reporting itself as instance `id`.
    pub fn new(limiter: Limiter, id: &str) -> Self {
        let mut secret = [0u8; 32];
        let secret = getrandom::fill(&mut secret).ok().map(|()| secret);
        Self {
            limiter,
            id: id.into(),
            history: Arc::default(),
            notes: Arc::default(),
            secret,
        }
    }

    /// The limiter it controls.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Published>> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn version(&self) -> u64 {
        self.lock().front().map_or(0, |p| p.version)
    }

    fn publish_now(
        &self,
        expected: u64,
        json: &str,
        note: &str,
        annotations: BTreeMap<String, String>,
    ) -> Result<u64, ControlError> {
        let set = Published::check_set(json, Published::SCHEMA)?;
        let mut history = self.lock();
        let current = history.front().map_or(0, |p| p.version);
        if current != expected {
            return Err(ControlError::Conflict { current });
        }
        self.limiter.publish(set);
        let version = current + 1;
        history.push_front(Published {
            version,
            schema: Published::SCHEMA,
            json: json.to_owned(),
            note: note.to_owned(),
            at_ms: self.limiter.now_ms(),
            annotations,
        });
        history.truncate(Published::HISTORY_LEN);
        Ok(version)
    }
}

impl MemoryControl {
    /// The limiter's rules added at run time (its own `add_temporary`
    /// included), with the notes given here, soonest to expire first.
    fn temporary(&self) -> Vec<TemporaryRule> {
        let notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        let mut list: Vec<TemporaryRule> = self
            .limiter
            .temporary_rules()
            .iter()
            .map(|r| {
                let (note, added_ms) = notes.get(&r.id).cloned().unwrap_or_default();
                TemporaryRule {
                    rule: (**r).clone(),
                    note,
                    added_ms,
                }
            })
            .collect();
        list.sort_by_key(|t| (t.expires_at_ms(), t.rule.id.clone()));
        list
    }

    /// Adds (or replaces) a rule at run time: checked as the fleet's
    /// control checks it, then `Limiter::add_temporary`.
    fn add_temporary_now(&self, rule: Rule, note: &str) -> Result<(), ControlError> {
        let now = self.limiter.now_ms();
        let running = self.limiter.temporary_rules();
        let others: Vec<&Rule> = running.iter().map(|r| &**r).collect();
        TemporaryRule::check(&rule, note, &self.limiter.rules(), &others, now)?;
        let id = rule.id.clone();
        let old = running.iter().find(|r| r.id == id);
        if old.is_some() {
            self.limiter.remove_temporary(&id);
        }
        if let Err(e) = self.limiter.add_temporary(rule) {
            if let Some(old) = old {
                // Put back what it was to replace; it was running a moment ago.
                let _ = self.limiter.add_temporary((**old).clone());
            }
            return Err(ControlError::Invalid(e.to_string()));
        }
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        notes.retain(|id, _| running.iter().any(|r| r.id == *id));
        notes.insert(id, (note.to_owned(), now));
        Ok(())
    }
}

/// A lift's or peek's error as the control says it.
pub(crate) fn admin_error(e: AdminError) -> ControlError {
    match e {
        AdminError::UnknownRule(id) => ControlError::Invalid(format!("no rule {id:?}")),
        AdminError::NoSubject => ControlError::Invalid(e.to_string()),
        AdminError::Backend(b) => ControlError::Unavailable(b.to_string()),
    }
}

impl Control for MemoryControl {
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>> {
        let current = self.lock().front().cloned();
        Box::pin(std::future::ready(Ok(current)))
    }

    fn history(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Published>, ControlError>> {
        let list = self.lock().iter().take(limit).cloned().collect();
        Box::pin(std::future::ready(Ok(list)))
    }

    fn publish<'a>(
        &'a self,
        expected_version: u64,
        json: &'a str,
        note: &'a str,
        annotations: BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<u64, ControlError>> {
        let r = self.publish_now(expected_version, json, note, annotations);
        Box::pin(std::future::ready(r))
    }

    fn set_switch(&self, switch: Switch, on: bool) -> BoxFuture<'_, Result<(), ControlError>> {
        let mut state = SwitchState::of(self.limiter.switches());
        state.set(switch, on);
        state.apply_to(self.limiter.switches());
        Box::pin(std::future::ready(Ok(())))
    }

    fn lift<'a>(
        &'a self,
        rule: &'a str,
        subject: KeyDigest,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.limiter
                .reset_subject(rule, subject)
                .await
                .map_err(admin_error)
        })
    }

    fn add_temporary<'a>(
        &'a self,
        rule: Rule,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(std::future::ready(self.add_temporary_now(rule, note)))
    }

    fn remove_temporary<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ControlError>> {
        Box::pin(std::future::ready(Ok(self.limiter.remove_temporary(id))))
    }

    fn fleet(&self) -> BoxFuture<'_, Result<FleetView, ControlError>> {
        let published = self.lock().front().map(|p| Published {
            json: String::new(),
            ..p.clone()
        });
        let report = InstanceReport::of(&self.limiter, &self.id, self.version(), None);
        Box::pin(std::future::ready(Ok(FleetView {
            published,
            instances: vec![report],
            switches: SwitchState::of(self.limiter.switches()),
            temporary: self.temporary(),
            ..FleetView::default()
        })))
    }

    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>> {
        let r = self.secret.ok_or_else(|| {
            ControlError::Unavailable("the operating system's random source failed".into())
        });
        Box::pin(std::future::ready(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleSet;
    use crate::test_runtime::block_on;

    const API: &str = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"]}]"#;

    #[test]
    fn an_invalid_set_is_refused_and_the_running_one_kept() {
        let limiter = Limiter::new(RuleSet::from_json(API).unwrap());
        let c = MemoryControl::new(limiter.clone(), "one");
        let bad = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
            "limit": 0, "period": "1m", "key": ["ip"]}]"#;
        let err = block_on(c.publish(0, bad, "", BTreeMap::new())).unwrap_err();
        let ControlError::Invalid(why) = err else {
            panic!("{err:?}")
        };
        assert!(
            why.contains("\"api\"") && why.contains("\"limit\""),
            "{why}"
        );
        assert_eq!(limiter.rules().get("api").map(|r| r.limit), Some(1));
        assert_eq!(block_on(c.current()).unwrap(), None);
    }

    #[test]
    fn history_keeps_the_last_versions_newest_first() {
        let c = MemoryControl::new(Limiter::new(RuleSet::default()), "one");
        for v in 0..(Published::HISTORY_LEN as u64 + 5) {
            block_on(c.publish(v, "[]", &v.to_string(), BTreeMap::new())).unwrap();
        }
        let h = block_on(c.history(100)).unwrap();
        assert_eq!(h.len(), Published::HISTORY_LEN);
        assert_eq!(h[0].version, Published::HISTORY_LEN as u64 + 5);
        assert_eq!(h[Published::HISTORY_LEN - 1].version, 6);
    }

    #[test]
    fn the_csrf_secret_is_stable() {
        let c = MemoryControl::new(Limiter::new(RuleSet::default()), "one");
        let a = block_on(c.csrf_secret()).unwrap();
        assert_eq!(a, block_on(c.clone().csrf_secret()).unwrap());
        assert_ne!(a, [0; 32]);
    }
}
