//! Rules added at run time through the fleet's control: the operator's
//! side (add, remove, list: a compare-and-set on the stored value) and the
//! follower's (run on this instance what is stored).

use std::collections::BTreeSet;
use std::sync::LazyLock;
use std::time::{SystemTime, UNIX_EPOCH};

use ratelimit_core::control::{Control, ControlError, TemporaryRule};
use ratelimit_core::rules::{Rule, RuleSet};
use ratelimit_core::Limiter;

use super::follow::{Applied, Shared};
use super::ops::random_hex;
use super::parts::Part;
use super::temporary::{bound, decode, encode, Entry, CAS, MAX_BYTES};
use super::ValkeyControl;

static CAS_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(CAS));

/// How many times a change is tried again when another one came first.
const TRIES: usize = 8;

/// The key expires this long after its last rule.
const KEEP_AFTER_MS: u64 = 60_000;

impl ValkeyControl {
    /// Now, by the limiter's clock when the control has one (as its
    /// followers judge expiry), else the system's.
    fn now_ms(&self) -> u64 {
        match &self.limiter {
            Some(l) => l.now_ms(),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    /// The stored value ("" when there is none) and its entries.
    async fn read_added(&self, now: u64) -> Result<(String, Vec<Entry>), ControlError> {
        let key = &self.keys.temporary;
        let raw: Option<String> = self
            .conn
            .cmd(redis::cmd("GET").arg(key))
            .await
            .map_err(|e| ControlError::Invalid(self.part_failed(Part::Temporary, &e)))?;
        let Some(raw) = raw else {
            return Ok((String::new(), Vec::new()));
        };
        let (entries, errors) = decode(&raw, now).map_err(|why| {
            ControlError::Invalid(self.problem(Part::Temporary, &format!("{key} holds {why}")))
        })?;
        for why in errors {
            tracing::warn!(error = %why, "control: a stored rule added at run time is skipped");
        }
        Ok((raw, entries))
    }

    /// The rules added at run time that have not expired, soonest first.
    pub(crate) async fn added_rules(&self) -> Result<Vec<TemporaryRule>, ControlError> {
        let now = self.now_ms();
        let (_, entries) = self.read_added(now).await?;
        let mut list: Vec<TemporaryRule> = entries
            .iter()
            .filter(|e| e.expires_at_ms > now)
            .filter_map(Entry::listed)
            .collect();
        list.sort_by_key(|t| (t.expires_at_ms(), t.rule.id.clone()));
        Ok(list)
    }

    /// Changes the stored entries with `change` (which answers whether it
    /// changed them) by compare-and-set, trying again when another change
    /// came first; expired entries are dropped.
    async fn change_added<F>(&self, mut change: F) -> Result<bool, ControlError>
    where
        F: FnMut(&mut Vec<Entry>, u64) -> Result<bool, ControlError>,
    {
        for _ in 0..TRIES {
            let now = self.now_ms();
            let (raw, mut entries) = self.read_added(now).await?;
            entries.retain(|e| e.expires_at_ms > now);
            if !change(&mut entries, now)? {
                return Ok(false);
            }
            bound(&mut entries);
            let value = encode(&entries);
            if value.len() > MAX_BYTES {
                return Err(ControlError::Invalid(format!(
                    "the rules added at run time would take {} bytes, over the limit of {MAX_BYTES}",
                    value.len()
                )));
            }
            let last = entries.iter().map(|e| e.expires_at_ms).max().unwrap_or(now);
            let until = (last + KEEP_AFTER_MS).to_string();
            let keys = [
                self.keys.temporary.as_str(),
                self.keys.temporary_stamp.as_str(),
            ];
            let stamp = random_hex(8)?;
            let args: [&[u8]; 5] = [
                raw.as_bytes(),
                value.as_bytes(),
                until.as_bytes(),
                self.keys.channel.as_bytes(),
                stamp.as_bytes(),
            ];
            let written: u8 = self.conn.script(&CAS_SCRIPT, &keys, &args).await?;
            if written == 1 {
                return Ok(true);
            }
        }
        Err(ControlError::Unavailable(
            "the rules added at run time kept changing; try again".into(),
        ))
    }

    pub(crate) async fn add_added(&self, rule: Rule, note: &str) -> Result<(), ControlError> {
        let now = self.now_ms();
        let published = self.current().await.ok().flatten();
        let set = match (published, &self.limiter) {
            (Some(p), _) => RuleSet::from_json_at(&p.json, now).unwrap_or_default(),
            (None, Some(l)) => l.rules(),
            (None, None) => RuleSet::default(),
        };
        let rule = &rule;
        self.change_added(|entries, now| {
            let others: Vec<&Rule> = entries.iter().filter_map(|e| e.rule.as_ref()).collect();
            TemporaryRule::check(rule, note, &set, &others, now)?;
            entries.retain(|e| e.id != rule.id);
            entries.push(Entry::added(rule.clone(), note, now));
            Ok(true)
        })
        .await?;
        tracing::info!(rule = %rule.id, note, expires_at_ms = rule.expires_at_ms, "control: rule added at run time");
        Ok(())
    }

    pub(crate) async fn remove_added(&self, id: &str) -> Result<bool, ControlError> {
        let removed = self
            .change_added(|entries, _| {
                let Some(at) = entries.iter().position(|e| e.id == id && e.rule.is_some()) else {
                    return Ok(false);
                };
                // Last in the list: the newest removal.
                let mut e = entries.remove(at);
                e.rule = None;
                entries.push(e);
                Ok(true)
            })
            .await?;
        if removed {
            tracing::info!(rule = %id, "control: rule added at run time removed");
        }
        Ok(removed)
    }

    /// Runs on `limiter` the rules stored, when their `stamp` (as polled)
    /// changed since the last read, or a rule is refused or no longer
    /// runs: adds the new and the changed ones, drops the removed ones. A
    /// missing key drops nothing (each rule stops at its `expires_at`).
    /// Whether anything changed; an error when the value cannot be read
    /// or is malformed.
    pub(crate) async fn apply_added(
        &self,
        limiter: &Limiter,
        shared: &Shared,
        stamp: Option<String>,
    ) -> Result<bool, ControlError> {
        let Some(stamp) = stamp else { return Ok(false) };
        let running: BTreeSet<String> = limiter
            .temporary_rules()
            .iter()
            .map(|r| r.id.clone())
            .collect();
        {
            // Unchanged and all still running: nothing to read.
            let a = shared.lock();
            let all_run = a.added.keys().all(|id| running.contains(id));
            if a.added_stamp.as_ref() == Some(&stamp) && all_run && a.added_refused.is_empty() {
                return Ok(false);
            }
        }
        let raw: Option<String> = self
            .conn
            .cmd(redis::cmd("GET").arg(&self.keys.temporary))
            .await?;
        let Some(raw) = raw else {
            shared.lock().added_stamp = Some(stamp);
            return Ok(false);
        };
        let now = limiter.now_ms();
        let key = &self.keys.temporary;
        let (entries, errors) =
            decode(&raw, now).map_err(|why| ControlError::Invalid(format!("{key} holds {why}")))?;
        let mut a = shared.lock();
        a.added_stamp = Some(stamp);
        let before = std::mem::take(&mut a.added_refused);
        let refuse = |a: &mut Applied, why: String| {
            if !before.contains(&why) {
                tracing::warn!(error = %why, "control: a stored rule added at run time is refused");
            }
            a.added_refused.insert(why);
        };
        for why in errors {
            refuse(&mut a, why);
        }
        let mut changed = false;
        for e in entries {
            let Some(rule) = e.rule else {
                if a.added.remove(&e.id).is_some() {
                    limiter.remove_temporary(&e.id);
                    tracing::info!(rule = %e.id, "control: rule added at run time removed");
                    changed = true;
                }
                continue;
            };
            let same = a.added.get(&e.id) == Some(&rule) && running.contains(&e.id);
            if same || rule.expired_at(now) {
                continue;
            }
            if a.added.remove(&e.id).is_some() {
                limiter.remove_temporary(&e.id);
            }
            match limiter.add_temporary(rule.clone()) {
                Ok(()) => {
                    tracing::info!(rule = %e.id, expires_at_ms = e.expires_at_ms, note = %e.note, "control: rule added at run time applied");
                    a.added.insert(e.id, rule);
                    changed = true;
                }
                Err(err) => refuse(&mut a, err.to_string()),
            }
        }
        a.added.retain(|_, r| !r.expired_at(now));
        Ok(changed || a.added_refused != before)
    }
}
