//! The fleet as `fleet()` reads it: the published version, the stored
//! switches, the last lift and the rules added at run time (each decoded
//! on its own: a part that cannot be read is named in the view's
//! `problems`, the others still shown), and the registry's live reports.

use std::collections::HashMap;

use ratelimit_core::control::{ControlError, FleetView};

use super::ops::{published_of, switches_of, trimmed};
use super::parts::{typed, Part};
use super::ValkeyControl;

/// The published set's fields `fleet()` reads (not its JSON).
const FIELDS: [&str; 5] = ["version", "schema", "note", "at_ms", "annotations"];

impl ValkeyControl {
    /// The published version, the live instances, the stored switches,
    /// the last lift and the rules added at run time. An error only when
    /// Valkey does not answer.
    pub(crate) async fn fleet_view(&self) -> Result<FleetView, ControlError> {
        let mut pipe = redis::pipe();
        pipe.cmd("HMGET")
            .arg(&self.keys.set)
            .arg(&FIELDS)
            .cmd("HGETALL")
            .arg(&self.keys.switches)
            .cmd("GET")
            .arg(&self.keys.lift_seq);
        let mut replies = self.conn.pipe_each(&pipe).await?.into_iter();
        let mut view = FleetView {
            instances: self.live_reports().await?,
            ..FleetView::default()
        };
        let mut next = || replies.next().unwrap_or(Ok(redis::Value::Nil));
        let (set, switches, seq) = (next(), next(), next());
        match typed::<Vec<Option<String>>>(set) {
            Ok(values) => {
                let h: HashMap<String, String> = FIELDS
                    .iter()
                    .zip(values)
                    .filter_map(|(k, v)| Some(((*k).to_owned(), v?)))
                    .collect();
                match published_of(&h) {
                    Ok(p) => view.published = p,
                    Err(why) => {
                        let wrong = format!("{} holds a malformed set: {why}", self.keys.set);
                        view.problems.push(self.problem(Part::Set, &wrong));
                    }
                }
            }
            Err(e) => view.problems.push(self.part_error(Part::Set, &e).await),
        }
        match typed::<HashMap<String, String>>(switches) {
            Ok(h) => view.switches = switches_of(&h),
            Err(e) => view
                .problems
                .push(self.part_error(Part::Switches, &e).await),
        }
        match typed::<Option<String>>(seq).map(|s| s.map(|s| (s.parse::<u64>(), s))) {
            Ok(None) => {}
            Ok(Some((Ok(n), _))) => view.lift_seq = n,
            Ok(Some((Err(_), s))) => {
                let wrong = format!(
                    "{} holds {:?}, not a number",
                    self.keys.lift_seq,
                    trimmed(&s)
                );
                view.problems.push(self.problem(Part::LiftSeq, &wrong));
            }
            Err(e) => view.problems.push(self.part_error(Part::LiftSeq, &e).await),
        }
        match self.added_rules().await {
            Ok(list) => view.temporary = list,
            Err(ControlError::Invalid(why)) => view.problems.push(why),
            Err(e) => return Err(e),
        }
        Ok(view)
    }
}
