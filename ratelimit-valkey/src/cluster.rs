//! Valkey Cluster: hash slots, the slot map and grouping a batch by node.
//!
//! Every key carries the subject in a `{hash tag}`, so one subject's state
//! lives in one slot. A batch's checks are grouped by the node that serves
//! their slot, and each node gets one pipelined round trip, all nodes in
//! parallel. The slot map is read with `CLUSTER SLOTS` in the background:
//! from the start (retrying with a backoff until a seed answers; until
//! then every check fails with a `Connection` error and the rules' fail
//! modes answer), every few seconds after, soon after a reply says
//! `MOVED`, `CLUSTERDOWN`, `READONLY` or `MASTERDOWN` (at most ten reads a
//! second), and at most once a second while a node fails to answer (its
//! replica may have been promoted).
//!
//! # Resharding and failover
//!
//! A node checks a command's slot before it runs the command: a `MOVED`
//! or `ASK` reply means the script did not run there, so the check was not
//! counted. Those checks, and only those, are sent once more, to the node
//! the reply names (after `ASKING` for an `ASK`), within what is left of
//! the same deadline, as the `NOSCRIPT` reload does. A check that timed
//! out or whose connection broke is never sent again: it may have counted.
//! A second redirect, or no time left, answers the check with a `Protocol`
//! error and the rule's fail mode applies. So, while slots move between
//! primaries, checks keep being answered and counted once; after a primary
//! dies, its slots' checks fail per fail mode until a replica is promoted
//! and the next slot map read finds it.
//!
//! Valkey replicates asynchronously: the counts a primary acknowledged but
//! had not yet streamed to its replica when it died are lost, and that many
//! more requests may be admitted after the failover (see the crate docs).
//!
//! The servers must run with `cluster-require-full-coverage no`: with the
//! default, one failed primary makes every node refuse every key, not just
//! the failed node's.

use std::collections::HashMap;

use redis::Value;

use crate::url::host_port;

mod state;
pub(crate) use state::ClusterState;

/// Number of hash slots.
pub const SLOTS: usize = 16384;

/// CRC16/XMODEM, as Valkey Cluster uses for key slots.
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The hash slot of `key`, honouring a non-empty `{hash tag}`.
pub fn slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16(tagged.unwrap_or(key)) % SLOTS as u16
}

/// A node's address, `host:port`.
pub(crate) type Addr = String;

/// Which primary serves each slot.
#[derive(Debug, Clone)]
pub(crate) struct SlotMap {
    /// Index into `nodes` for each slot; `u16::MAX` when no node serves it.
    slots: Vec<u16>,
    /// The primaries' addresses.
    pub(crate) nodes: Vec<Addr>,
}

impl SlotMap {
    /// No slot served (before the first `CLUSTER SLOTS`).
    pub(crate) fn empty() -> Self {
        SlotMap {
            slots: vec![u16::MAX; SLOTS],
            nodes: Vec::new(),
        }
    }

    /// The primary of `slot`.
    pub(crate) fn node_of(&self, slot: u16) -> Option<&Addr> {
        let i = *self.slots.get(slot as usize)?;
        self.nodes.get(i as usize)
    }

    /// Parses a `CLUSTER SLOTS` reply.
    pub(crate) fn parse(v: &Value) -> Result<Self, String> {
        let Value::Array(ranges) = v else {
            return Err(format!("CLUSTER SLOTS: expected an array, got {v:?}"));
        };
        let mut map = SlotMap {
            slots: vec![u16::MAX; SLOTS],
            nodes: Vec::new(),
        };
        let mut index: HashMap<Addr, u16> = HashMap::new();
        for range in ranges {
            let Value::Array(items) = range else {
                return Err("CLUSTER SLOTS: a range is not an array".into());
            };
            let (Some(first), Some(last), Some(Value::Array(primary))) =
                (items.first(), items.get(1), items.get(2))
            else {
                return Err("CLUSTER SLOTS: a range is too short".into());
            };
            let (Value::Int(first), Value::Int(last)) = (first, last) else {
                return Err("CLUSTER SLOTS: slot bounds are not numbers".into());
            };
            let host = match primary.first() {
                Some(Value::BulkString(h)) => String::from_utf8_lossy(h).into_owned(),
                Some(Value::SimpleString(h)) => h.clone(),
                _ => return Err("CLUSTER SLOTS: no host".into()),
            };
            let Some(Value::Int(port)) = primary.get(1) else {
                return Err("CLUSTER SLOTS: no port".into());
            };
            let Ok(port) = u16::try_from(*port) else {
                return Err(format!("CLUSTER SLOTS: bad port {port}"));
            };
            let addr = host_port(&host, port);
            let next = map.nodes.len() as u16;
            let i = *index.entry(addr.clone()).or_insert_with(|| {
                map.nodes.push(addr);
                next
            });
            let (first, last) = (*first as usize, *last as usize);
            if first > last || last >= SLOTS {
                return Err(format!("CLUSTER SLOTS: bad range {first}-{last}"));
            }
            map.slots[first..=last].fill(i);
        }
        Ok(map)
    }
}

/// Whether a server error means the slot map is out of date. `ASK` and
/// `TRYAGAIN` do not: a slot is moving, and the map only changes once it
/// has moved (then nodes answer `MOVED`).
pub(crate) fn is_stale(code: &str) -> bool {
    matches!(code, "MOVED" | "CLUSTERDOWN" | "READONLY" | "MASTERDOWN")
}

/// A `MOVED` or `ASK` reply: the command did not run, and where to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `ASK`: send `ASKING` first, and the slot map stays as it is.
    pub(crate) ask: bool,
    /// The node to ask, `host:port`.
    pub(crate) addr: Addr,
}

/// The redirect in `v`, if it is one. `from` is the node that replied: an
/// empty host (`MOVED 3999 :6381`) means the same host as `from`.
pub(crate) fn redirect(v: &Value, from: &str) -> Option<Redirect> {
    let Value::ServerError(e) = v else {
        return None;
    };
    let ask = match e.code() {
        "MOVED" => false,
        "ASK" => true,
        _ => return None,
    };
    let addr = redirect_addr(e.details()?, from)?;
    Some(Redirect { ask, addr })
}

/// The `host:port` a redirect's details (`<slot> <host>:<port>`) name,
/// sent by the node at `from`: an empty host (an unknown endpoint) is
/// `from`'s.
pub(crate) fn redirect_addr(details: &str, from: &str) -> Option<String> {
    let target = details.split_whitespace().nth(1)?;
    let (host, port) = target.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = if host.is_empty() {
        from.rsplit_once(':').map_or(from, |(h, _)| h)
    } else {
        host
    };
    if host.is_empty() {
        return None;
    }
    Some(host_port(host, port))
}

#[cfg(test)]
mod tests;
