//! Moving slots, with their keys, from one primary to another, the way
//! `valkey-cli --cluster reshard` does: `CLUSTER SETSLOT .. IMPORTING` on
//! the target, `MIGRATING` on the source, `GETKEYSINSLOT` + `MIGRATE` until
//! the slot is empty, then `SETSLOT .. NODE` on the target, the source and
//! every other primary.

use std::ops::RangeInclusive;
use std::time::Duration;

use super::cluster::ValkeyCluster;
use super::resp::Conn;

/// What a migration did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Migration {
    /// Slots moved.
    pub slots: usize,
    /// Keys moved.
    pub keys: usize,
}

fn cmd(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// Every reply fine, or the first error with what was sent.
fn all_ok(what: &str, replies: Vec<Result<String, String>>) -> Result<Vec<String>, String> {
    replies
        .into_iter()
        .map(|r| r.map_err(|e| format!("{what}: {e}")))
        .collect()
}

impl ValkeyCluster {
    /// Moves `slots` and their keys from primary `from` to primary `to`,
    /// `chunk` slots at a time (pipelined), pausing `pause` in each chunk
    /// that had keys, after they moved and before the slots are handed
    /// over: while it pauses, the source answers `ASK` for those keys. Blocking: call it
    /// from `spawn_blocking` under a runtime.
    ///
    /// # Errors
    ///
    /// When a node refuses a step (the cluster is left mid-migration).
    pub fn migrate_slots(
        &self,
        from: usize,
        to: usize,
        slots: RangeInclusive<u16>,
        chunk: usize,
        pause: Duration,
    ) -> Result<Migration, String> {
        let (from_id, to_id) = (self.id(from).to_string(), self.id(to).to_string());
        let to_port = self.port(to).to_string();
        let mut source = Conn::open(self.port(from))?;
        let mut target = Conn::open(self.port(to))?;
        let mut others = (0..self.primaries)
            .filter(|&i| i != from && i != to)
            .map(|i| Conn::open(self.port(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let all: Vec<u16> = slots.collect();
        let mut done = Migration::default();
        for part in all.chunks(chunk.max(1)) {
            let each = |f: &dyn Fn(&str) -> Vec<String>| -> Vec<Vec<String>> {
                part.iter().map(|s| f(&s.to_string())).collect()
            };
            all_ok(
                "IMPORTING",
                target.pipeline(&each(&|s| {
                    cmd(&["CLUSTER", "SETSLOT", s, "IMPORTING", &from_id])
                }))?,
            )?;
            all_ok(
                "MIGRATING",
                source.pipeline(&each(&|s| {
                    cmd(&["CLUSTER", "SETSLOT", s, "MIGRATING", &to_id])
                }))?,
            )?;
            // No key is created on the source while it migrates (it answers
            // ASK for missing keys), so this loop ends.
            let mut moved = 0;
            loop {
                let lists = all_ok(
                    "GETKEYSINSLOT",
                    source.pipeline(&each(&|s| cmd(&["CLUSTER", "GETKEYSINSLOT", s, "1000"])))?,
                )?;
                let keys: Vec<&str> = lists
                    .iter()
                    .flat_map(|l| l.lines())
                    .filter(|k| !k.is_empty())
                    .collect();
                if keys.is_empty() {
                    break;
                }
                for key in &keys {
                    // One key per MIGRATE: the keys of a chunk span slots.
                    let r = source.call(&["MIGRATE", "127.0.0.1", &to_port, key, "0", "5000"])?;
                    if r != "OK" && r != "NOKEY" {
                        return Err(format!("MIGRATE {key}: {r}"));
                    }
                }
                done.keys += keys.len();
                moved += keys.len();
            }
            if moved > 0 {
                std::thread::sleep(pause);
            }
            let node = each(&|s| cmd(&["CLUSTER", "SETSLOT", s, "NODE", &to_id]));
            all_ok("SETSLOT NODE on the target", target.pipeline(&node)?)?;
            all_ok("SETSLOT NODE on the source", source.pipeline(&node)?)?;
            for c in &mut others {
                all_ok("SETSLOT NODE", c.pipeline(&node)?)?;
            }
            done.slots += part.len();
        }
        Ok(done)
    }
}
