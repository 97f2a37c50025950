//! What a follower does on each read of the control state: load a new set
//! (or refuse it, and say why), apply the switches and the lifts, notice
//! that the control keys are gone.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use ratelimit_core::control::{ControlError, InstanceReport, Published, SwitchState};
use ratelimit_core::Limiter;

use super::codec::digest_of_hex;
use super::follow::Shared;
use super::ops::{switches_of, trimmed};
use super::parts::{typed, Part};
use super::scripts::{LIFTS_KEPT, MAX_VERSION};
use super::ValkeyControl;

/// Why the control keys are reported gone.
pub(crate) const LOST: &str = "the control keys are gone from Valkey (restarted without persistence, or deleted): keeping the running set until the next publish";

impl ValkeyControl {
    /// Reads the control state and applies what changed; true when
    /// something did. Each part (the set, the switches, the lifts, the
    /// rules added at run time) is decoded and applied on its own: a key
    /// that cannot be read costs only its part. An error only when Valkey
    /// does not answer.
    pub(crate) async fn sync(
        &self,
        limiter: &Limiter,
        shared: &Shared,
    ) -> Result<bool, ControlError> {
        // Plain reads (a script's keys need write access under an ACL),
        // in one round trip.
        let mut pipe = redis::pipe();
        pipe.cmd("HMGET")
            .arg(&self.keys.set)
            .arg(&["version", "epoch"])
            .cmd("HSTRLEN")
            .arg(&self.keys.set)
            .arg("json")
            .cmd("HGETALL")
            .arg(&self.keys.switches)
            .cmd("GET")
            .arg(&self.keys.lift_seq)
            .cmd("GET")
            .arg(&self.keys.temporary_stamp);
        let mut replies = self.conn.pipe_each(&pipe).await?.into_iter();
        shared.lock().unreachable = false;
        let mut next = || {
            replies.next().unwrap_or_else(|| {
                Err(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "a reply is missing",
                )))
            })
        };
        let (ids, len, switches, seq, added) = (next(), next(), next(), next(), next());
        let mut changed = match typed::<(Option<String>, Option<String>)>(ids)
            .and_then(|ids| Ok((ids, typed::<u64>(len)?)))
        {
            Ok(((version, epoch), len)) => {
                let r = self.apply_set(limiter, shared, version, epoch, len).await;
                self.settle(shared, Part::Set, r)
            }
            Err(e) => Self::note_part(
                shared,
                Part::Set,
                Some(self.part_error(Part::Set, &e).await),
            ),
        };
        changed |= match typed::<HashMap<String, String>>(switches) {
            Ok(h) => Self::note_part(shared, Part::Switches, None) | apply_switches(limiter, &h),
            Err(e) => {
                let why = self.part_error(Part::Switches, &e).await;
                Self::note_part(shared, Part::Switches, Some(why))
            }
        };
        changed |= match typed::<Option<String>>(seq) {
            Ok(seq) => self.lifts_at(limiter, shared, seq).await,
            Err(e) => {
                let why = self.part_error(Part::LiftSeq, &e).await;
                Self::note_part(shared, Part::LiftSeq, Some(why))
            }
        };
        changed |= match typed::<Option<String>>(added) {
            Ok(stamp) => {
                let r = self.apply_added(limiter, shared, stamp).await;
                Self::note_part(shared, Part::TemporaryStamp, None)
                    | self.settle(shared, Part::Temporary, r)
            }
            Err(e) => {
                let why = self.part_error(Part::TemporaryStamp, &e).await;
                Self::note_part(shared, Part::TemporaryStamp, Some(why))
            }
        };
        Ok(changed)
    }

    /// The lifts up to sequence number `seq` (as stored: digits, or
    /// nothing).
    async fn lifts_at(&self, limiter: &Limiter, shared: &Shared, seq: Option<String>) -> bool {
        let seq = match seq.as_deref().map(str::parse::<u64>) {
            None => Ok(0),
            Some(Ok(n)) => Ok(n),
            Some(Err(_)) => Err(self.problem(
                Part::LiftSeq,
                &format!(
                    "{} holds {:?}, not a number",
                    self.keys.lift_seq,
                    trimmed(seq.as_deref().unwrap_or(""))
                ),
            )),
        };
        let seq = match seq {
            Ok(n) => n,
            Err(why) => return Self::note_part(shared, Part::LiftSeq, Some(why)),
        };
        let changed = Self::note_part(shared, Part::LiftSeq, None);
        let r = self.apply_lifts(limiter, shared, seq).await;
        self.settle(shared, Part::Lifts, r) | changed
    }

    /// The control keys are gone (Valkey restarted without persistence):
    /// keep the running set, and say so once. Whether anything changed.
    fn note_lost(shared: &Shared) -> bool {
        let mut a = shared.lock();
        if a.epoch.is_none() || a.lost {
            return false;
        }
        tracing::warn!(version = a.version, "control: {LOST}");
        metrics::gauge!("ratelimit_control_lost").set(1.0);
        a.lost = true;
        a.refused = Some((0, LOST.into()));
        true
    }

    async fn apply_set(
        &self,
        limiter: &Limiter,
        shared: &Shared,
        version: Option<String>,
        epoch: Option<String>,
        json_len: u64,
    ) -> Result<bool, ControlError> {
        let Some(version) = version else {
            return Ok(Self::note_lost(shared));
        };
        let epoch = epoch.unwrap_or_default();
        let v = match version.parse::<u64>() {
            Ok(v) if v <= MAX_VERSION => v,
            _ => {
                let why = format!(
                    "the stored version is not a number below 2^53: {:?}",
                    trimmed(&version)
                );
                return Ok(self.refuse(shared, (epoch, 0), why));
            }
        };
        let seen = (epoch.clone(), v);
        if shared.lock().seen.as_ref() == Some(&seen) {
            return Ok(false);
        }
        if json_len > Published::MAX_SET_BYTES as u64 {
            let why = format!(
                "the rule set is {json_len} bytes, over the limit of {}",
                Published::MAX_SET_BYTES
            );
            return Ok(self.refuse(shared, seen, why));
        }
        // One read of the version with its set: a publish between the two
        // reads is loaded whole, under its own version.
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&self.keys.set).arg(&["version", "schema", "json"]);
        let (ver, schema, json): (Option<String>, Option<String>, Option<String>) =
            self.conn.cmd(&cmd).await?;
        let v = ver.and_then(|s| s.parse::<u64>().ok()).unwrap_or(v);
        let seen = (epoch, v);
        let Some(schema) = schema.and_then(|s| s.parse::<u32>().ok()) else {
            return Ok(self.refuse(
                shared,
                seen,
                "the stored schema is missing or not a number".into(),
            ));
        };
        if schema > shared.schema {
            let why = format!(
                "the rule set needs schema {schema}; this build reads schema {}",
                shared.schema
            );
            return Ok(self.refuse(shared, seen, why));
        }
        match Published::check_set(json.as_deref().unwrap_or(""), schema.min(Published::SCHEMA)) {
            Ok(set) => {
                limiter.publish(set);
                let mut a = shared.lock();
                tracing::info!(
                    version = v,
                    previous = a.version,
                    "control: rule set applied"
                );
                metrics::gauge!("ratelimit_control_version").set(v as f64);
                metrics::gauge!("ratelimit_control_lost").set(0.0);
                a.version = v;
                a.epoch = Some(seen.0.clone());
                a.seen = Some(seen);
                a.refused = None;
                a.lost = false;
                Ok(true)
            }
            Err(e) => Ok(self.refuse(shared, seen, e.to_string())),
        }
    }

    fn refuse(&self, shared: &Shared, seen: (String, u64), why: String) -> bool {
        let mut a = shared.lock();
        if a.refused.as_ref() == Some(&(seen.1, why.clone())) {
            return false;
        }
        tracing::warn!(version = seen.1, running = a.version, reason = %why, "control: rule set refused; keeping the running set");
        metrics::counter!("ratelimit_control_refused_total").increment(1);
        a.refused = Some((seen.1, why));
        a.seen = Some(seen);
        a.lost = false;
        true
    }

    async fn apply_lifts(
        &self,
        limiter: &Limiter,
        shared: &Shared,
        seq: u64,
    ) -> Result<bool, ControlError> {
        let last = shared.lock().lift_seq;
        if seq == last {
            return Ok(false);
        }
        if seq < last {
            // The counter started again (control keys gone): follow it.
            shared.lock().lift_seq = seq;
            return Ok(false);
        }
        let n = usize::try_from(seq - last)
            .unwrap_or(LIFTS_KEPT)
            .min(LIFTS_KEPT);
        let mut cmd = redis::cmd("LRANGE");
        cmd.arg(&self.keys.lifts).arg(0).arg(n - 1);
        let entries: Vec<String> = self.conn.cmd(&cmd).await?;
        for entry in entries {
            let mut parts = entry.splitn(3, ' ');
            let (Some(s), Some(rule), Some(hex)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (Ok(s), Some(subject)) = (s.parse::<u64>(), digest_of_hex(hex)) else {
                continue;
            };
            if s > last {
                if let Err(e) = limiter.lift_cached(rule, subject) {
                    tracing::debug!(rule, error = %e, "control: lift of a rule not running here");
                }
            }
        }
        shared.lock().lift_seq = seq;
        Ok(true)
    }

    /// Writes this instance's report; returns the live fleet's size.
    pub(crate) async fn report(
        &self,
        limiter: &Limiter,
        id: &str,
        shared: &Shared,
    ) -> Result<u64, ControlError> {
        let (version, refused) = {
            let a = shared.lock();
            (a.version, a.refused.clone())
        };
        let mut report = InstanceReport::of(limiter, id, version, refused);
        report.schema = shared.schema;
        {
            let a = shared.lock();
            report.lift_seq = a.lift_seq;
            report.problems = a.problems();
        }
        report.last_report_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.write_report(&report).await
    }
}

/// Applies the stored switches (an empty hash, never written or lost, is
/// not applied); whether they changed.
fn apply_switches(limiter: &Limiter, h: &HashMap<String, String>) -> bool {
    if h.is_empty() {
        return false;
    }
    let stored = switches_of(h);
    if stored == SwitchState::of(limiter.switches()) {
        return false;
    }
    stored.apply_to(limiter.switches());
    tracing::info!(?stored, "control: switches applied");
    true
}
