//! The parts of the control state a follower reads, each on its own: the
//! published set, the switches, the lifts and the rules added at run time.
//!
//! They are read in one round trip, but each reply is decoded and applied
//! by itself, so a key of the wrong type (a list at `lift_seq`, a string at
//! `set`) costs only its own part: a kill switch still reaches every
//! instance. What cannot be read is logged once, naming the key and what
//! it should hold, and reported to the registry until it is fixed.

use ratelimit_core::control::ControlError;
use redis::{FromRedisValue, RedisError, RedisResult, Value};

use super::follow::Shared;
use super::scripts::Keys;
use super::ValkeyControl;

/// One part of the control state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Set,
    Switches,
    LiftSeq,
    Lifts,
    Temporary,
    TemporaryStamp,
}

impl Part {
    /// The key it lives in.
    pub(crate) fn key(self, keys: &Keys) -> &str {
        match self {
            Part::Set => &keys.set,
            Part::Switches => &keys.switches,
            Part::LiftSeq => &keys.lift_seq,
            Part::Lifts => &keys.lifts,
            Part::Temporary => &keys.temporary,
            Part::TemporaryStamp => &keys.temporary_stamp,
        }
    }

    /// Its name, as the follower keeps its problems.
    fn name(self) -> &'static str {
        match self {
            Part::Set => "set",
            Part::Switches => "switches",
            Part::LiftSeq => "lift_seq",
            Part::Lifts => "lifts",
            Part::Temporary => "temporary",
            Part::TemporaryStamp => "temporary_stamp",
        }
    }

    /// What the key should hold.
    fn holds(self) -> &'static str {
        match self {
            Part::Set => {
                "the published set, a hash (version, schema, json, note, at_ms, annotations, epoch)"
            }
            Part::Switches => "the switches, a hash of switch names to 1 or 0",
            Part::LiftSeq => "the last lift's number, a string of digits",
            Part::Lifts => "the lifts, a list of \"seq rule subject\" strings",
            Part::Temporary => "the rules added at run time, a string of JSON",
            Part::TemporaryStamp => {
                "the stamp of the last change to the rules added at run time, a string"
            }
        }
    }

    /// What stops until it is fixed.
    fn stalls(self) -> &'static str {
        match self {
            Part::Set => "published rule sets are not loaded",
            Part::Switches => "the switches are not applied",
            Part::LiftSeq | Part::Lifts => "lifts are not applied",
            Part::Temporary | Part::TemporaryStamp => "rules added at run time are not applied",
        }
    }
}

/// A reply decoded as `T`; a server error (or a reply of another shape)
/// stays an error.
pub(crate) fn typed<T: FromRedisValue>(reply: RedisResult<Value>) -> RedisResult<T> {
    reply.and_then(|v| redis::from_redis_value(v).map_err(RedisError::from))
}

impl ValkeyControl {
    /// Why `part` cannot be read, from the server's error: a key of the
    /// wrong type is named with the type it holds.
    pub(crate) async fn part_error(&self, part: Part, e: &RedisError) -> String {
        let key = part.key(&self.keys);
        if e.code() != Some("WRONGTYPE") {
            return self.problem(part, &format!("{key} cannot be read ({e})"));
        }
        let kind: Result<String, _> = self.conn.cmd(redis::cmd("TYPE").arg(key)).await;
        let kind = kind.unwrap_or_else(|_| "value of another type".into());
        self.problem(part, &format!("{key} holds a {kind}"))
    }

    /// Why `part` cannot be read, from a control call's error.
    pub(crate) fn part_failed(&self, part: Part, e: &ControlError) -> String {
        let key = part.key(&self.keys);
        self.problem(part, &format!("{key} cannot be read ({e})"))
    }

    /// `<what is wrong>: it should hold <...>; <what stalls> until it is
    /// fixed (delete the key ...)`.
    pub(crate) fn problem(&self, part: Part, wrong: &str) -> String {
        format!(
            "{wrong}: it should hold {}; {} until it is fixed (delete the key: the next change through the control writes it again)",
            part.holds(),
            part.stalls()
        )
    }

    /// Records how reading `part` went: a new problem is logged once (the
    /// other parts are still applied), a fixed one logged as such. Whether
    /// that changed what the instance reports.
    pub(crate) fn note_part(shared: &Shared, part: Part, problem: Option<String>) -> bool {
        let mut a = shared.lock();
        match problem {
            Some(why) => {
                if a.problems.get(part.name()) == Some(&why) {
                    return false;
                }
                tracing::warn!(problem = %why, "control: a control key cannot be read; the other parts of the control state are still applied");
                a.problems.insert(part.name(), why);
                true
            }
            None => {
                let Some(was) = a.problems.remove(part.name()) else {
                    return false;
                };
                tracing::info!(was = %was, "control: a control key can be read again");
                true
            }
        }
    }

    /// Applies one part: `apply`'s answer, or its error noted as the
    /// part's problem. Whether anything changed.
    pub(crate) fn settle(
        &self,
        shared: &Shared,
        part: Part,
        applied: Result<bool, ControlError>,
    ) -> bool {
        match applied {
            Ok(changed) => Self::note_part(shared, part, None) | changed,
            Err(e) => Self::note_part(shared, part, Some(self.part_failed(part, &e))),
        }
    }
}
