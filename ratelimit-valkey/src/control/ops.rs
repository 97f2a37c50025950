//! [`Control`] over Valkey: each operation is one script or command.

use std::collections::{BTreeMap, HashMap};

use ratelimit_core::control::{
    BoxFuture, Control, ControlError, FleetView, Published, Switch, SwitchState,
};
use ratelimit_core::KeyDigest;

use super::codec::{annotations_from_json, annotations_to_json, history_entry};
use super::scripts::LIFTS_KEPT;
use super::ValkeyControl;

/// Random hex from the operating system's source.
pub(crate) fn random_hex(bytes: usize) -> Result<String, ControlError> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b)
        .map_err(|e| ControlError::Unavailable(format!("random source: {e}")))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn field_u64(h: &HashMap<String, String>, k: &str) -> Result<u64, String> {
    let v = h.get(k).ok_or_else(|| format!("field {k:?} is missing"))?;
    v.parse()
        .map_err(|_| format!("field {k:?} is not a number: {:?}", trimmed(v)))
}

/// At most 40 characters of a stored value, for an error message.
pub(crate) fn trimmed(v: &str) -> String {
    v.chars().take(40).collect()
}

/// The published set from its hash; `None` when it is empty.
pub(crate) fn published_of(h: &HashMap<String, String>) -> Result<Option<Published>, String> {
    if h.is_empty() {
        return Ok(None);
    }
    let schema = field_u64(h, "schema")?;
    Ok(Some(Published {
        version: field_u64(h, "version")?,
        schema: u32::try_from(schema).map_err(|_| format!("schema {schema} is out of range"))?,
        json: h.get("json").cloned().unwrap_or_default(),
        note: h.get("note").cloned().unwrap_or_default(),
        at_ms: field_u64(h, "at_ms").unwrap_or(0),
        annotations: annotations_from_json(h.get("annotations").map_or("", |s| s))?,
    }))
}

/// The switches from their hash: "1" is on, anything else off.
pub(crate) fn switches_of(h: &HashMap<String, String>) -> SwitchState {
    let mut s = SwitchState::default();
    for sw in Switch::ALL {
        s.set(sw, h.get(sw.name()).is_some_and(|v| v == "1"));
    }
    s
}

fn malformed(what: &str, why: String) -> ControlError {
    ControlError::Invalid(format!("the {what} stored in Valkey is malformed: {why}"))
}

impl ValkeyControl {
    async fn read_published(&self, with_json: bool) -> Result<Option<Published>, ControlError> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&self.keys.set);
        let fields = ["version", "schema", "note", "at_ms", "annotations", "json"];
        let fields = if with_json { &fields[..] } else { &fields[..5] };
        cmd.arg(fields);
        let values: Vec<Option<String>> = match self.conn.cmd(&cmd).await {
            Ok(v) => v,
            Err(e) => return Err(self.name_key(e, self.keys.expect_set()).await),
        };
        let h: HashMap<String, String> = fields
            .iter()
            .zip(values)
            .filter_map(|(k, v)| Some(((*k).to_owned(), v?)))
            .collect();
        published_of(&h).map_err(|e| malformed("published set", e))
    }

    async fn publish_checked(
        &self,
        expected: u64,
        json: &str,
        note: &str,
        annotations: BTreeMap<String, String>,
    ) -> Result<u64, ControlError> {
        Published::check_set(json, Published::SCHEMA)?;
        self.hold_for_older_schemas().await?;
        let (expected_s, schema_s) = (expected.to_string(), Published::SCHEMA.to_string());
        let (ann, epoch) = (annotations_to_json(&annotations), random_hex(8)?);
        let kept = Published::HISTORY_LEN.to_string();
        let args: [&[u8]; 8] = [
            expected_s.as_bytes(),
            schema_s.as_bytes(),
            json.as_bytes(),
            note.as_bytes(),
            ann.as_bytes(),
            epoch.as_bytes(),
            kept.as_bytes(),
            self.keys.channel.as_bytes(),
        ];
        let keys = [self.keys.set.as_str(), self.keys.history.as_str()];
        let r: Result<(u8, u64), _> = self.conn.script(&self.scripts.publish, &keys, &args).await;
        match r {
            Ok((1, v)) => Ok(v),
            Ok((_, current)) => Err(ControlError::Conflict { current }),
            Err(ControlError::Unavailable(why)) if why.contains("stored version") => {
                Err(malformed("published version", why))
            }
            Err(e) => match self.name_key(e, self.keys.expect_set()).await {
                ControlError::Invalid(why) => Err(ControlError::Invalid(format!(
                    "{why}: nothing was published"
                ))),
                e => Err(e),
            },
        }
    }

    async fn history_of(&self, limit: usize) -> Result<Vec<Published>, ControlError> {
        let n = limit.min(Published::HISTORY_LEN);
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("LRANGE");
        cmd.arg(&self.keys.history).arg(0).arg(n - 1);
        let raw: Vec<String> = self.conn.cmd(&cmd).await?;
        let mut out = Vec::with_capacity(raw.len());
        for entry in raw {
            match history_entry(&entry) {
                Ok(p) => out.push(p),
                Err(e) => tracing::warn!(error = %e, "a malformed history entry is skipped"),
            }
        }
        Ok(out)
    }

    async fn lift_now(&self, rule: &str, subject: KeyDigest) -> Result<(), ControlError> {
        let limiter = self.limiter.as_ref().ok_or_else(|| {
            ControlError::Invalid("a lift needs the limiter (ValkeyControl::with_limiter)".into())
        })?;
        limiter
            .reset_subject(rule, subject)
            .await
            .map_err(|e| match e {
                ratelimit_core::limiter::AdminError::UnknownRule(id) => {
                    ControlError::Invalid(format!("no rule {id:?}"))
                }
                other => ControlError::Unavailable(other.to_string()),
            })?;
        let (hex, kept) = (subject.to_hex(), LIFTS_KEPT.to_string());
        let args: [&[u8]; 4] = [
            rule.as_bytes(),
            hex.as_bytes(),
            kept.as_bytes(),
            self.keys.channel.as_bytes(),
        ];
        let keys = [self.keys.lifts.as_str(), self.keys.lift_seq.as_str()];
        let _: u64 = self.conn.script(&self.scripts.lift, &keys, &args).await?;
        Ok(())
    }

    async fn switch_now(&self, switch: Switch, on: bool) -> Result<(), ControlError> {
        let value = if on { "1" } else { "0" };
        let args: [&[u8]; 3] = [
            switch.name().as_bytes(),
            value.as_bytes(),
            self.keys.channel.as_bytes(),
        ];
        let keys = [self.keys.switches.as_str()];
        let flipped = self.conn.script::<u64>(&self.scripts.switch, &keys, &args);
        match flipped.await {
            Ok(_) => Ok(()),
            Err(e) => Err(self.name_key(e, self.keys.expect_switches()).await),
        }
    }

    async fn csrf_now(&self) -> Result<[u8; 32], ControlError> {
        let mine = random_hex(32)?;
        let keys = [self.keys.csrf.as_str()];
        let stored: String = self
            .conn
            .script(&self.scripts.csrf, &keys, &[mine.as_bytes()])
            .await?;
        let bad = || malformed("CSRF secret", "expected 64 hex digits".into());
        if stored.len() != 64 || !stored.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(&stored[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(out)
    }
}

impl Control for ValkeyControl {
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>> {
        Box::pin(self.read_published(true))
    }

    fn history(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Published>, ControlError>> {
        Box::pin(self.history_of(limit))
    }

    fn publish<'a>(
        &'a self,
        expected_version: u64,
        json: &'a str,
        note: &'a str,
        annotations: BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<u64, ControlError>> {
        Box::pin(self.publish_checked(expected_version, json, note, annotations))
    }

    fn set_switch(&self, switch: Switch, on: bool) -> BoxFuture<'_, Result<(), ControlError>> {
        Box::pin(self.switch_now(switch, on))
    }

    fn lift<'a>(
        &'a self,
        rule: &'a str,
        subject: KeyDigest,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(self.lift_now(rule, subject))
    }

    fn add_temporary<'a>(
        &'a self,
        rule: ratelimit_core::rules::Rule,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(self.add_added(rule, note))
    }

    fn remove_temporary<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ControlError>> {
        Box::pin(self.remove_added(id))
    }

    fn fleet(&self) -> BoxFuture<'_, Result<FleetView, ControlError>> {
        Box::pin(self.fleet_view())
    }

    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>> {
        Box::pin(self.csrf_now())
    }
}
