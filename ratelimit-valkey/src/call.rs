//! One script call: the checks of one request that one `EVALSHA` decides.
//!
//! Keys are `<prefix>{<subject>}<namespace>`, so one subject lives in one
//! hash slot whatever the rule. A standalone server takes every check of a
//! batch in one call (it enforces no slots); a cluster node takes one call
//! per slot (a script's keys must share one). A call of one check runs its
//! algorithm's script and gets its decision; a call of several runs the
//! batch script, which decides each check in turn, each in a protected
//! call, and answers an array of decisions in which a check's error (a key
//! of the wrong type) is that check's item alone.
//!
//! A call is the unit of everything that happens to a reply as a whole: a
//! `NOSCRIPT` reload (see [`crate::node`]) and a cluster's `MOVED` / `ASK`
//! hop (see [`crate::route`]) take the whole call, which did not run.

use std::collections::HashMap;

use redis::{Cmd, Value};

use crate::cluster;
use crate::scripts::{push_check, push_time, script, Invocation, BATCH};

/// The checks of one script call: their positions in the batch and their
/// invocations, never empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Call {
    /// Each check's position in the batch.
    pub(crate) idx: Vec<usize>,
    /// Each check's invocation.
    pub(crate) invs: Vec<Invocation>,
}

impl Call {
    /// Adds a check.
    pub(crate) fn push(&mut self, i: usize, inv: Invocation) {
        self.idx.push(i);
        self.invs.push(inv);
    }

    /// The index of the script this call runs: the algorithm's for one
    /// check, else the batch script.
    pub(crate) fn script(&self) -> usize {
        match self.invs.as_slice() {
            [one] => one.script(),
            _ => BATCH,
        }
    }

    /// `EVALSHA sha N key1..keyN (head params...) x N [now offset]`: the
    /// same arguments for one check (its algorithm's script) and for
    /// several (the batch script).
    pub(crate) fn evalsha(&self) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script(self.script()).get_hash())
            .arg(self.invs.len());
        for inv in &self.invs {
            cmd.arg(&inv.key);
        }
        for inv in &self.invs {
            push_check(&mut cmd, inv);
        }
        if let Some(first) = self.invs.first() {
            push_time(&mut cmd, first.now);
        }
        cmd
    }

    /// Each check's reply, from the call's: the batch script's lines one
    /// by one (a line `-CODE message` is that check's error); an error of
    /// the whole call (the script did not run, or failed as a whole) for
    /// every check.
    pub(crate) fn replies(&self, v: Value) -> Vec<Value> {
        let n = self.invs.len();
        if n == 1 {
            return vec![v];
        }
        let Value::BulkString(text) = v else {
            return vec![v; n];
        };
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        if lines.len() != n {
            let e = format!("ERR {} replies for {n} checks", lines.len());
            return vec![server_error(e.as_bytes()); n];
        }
        lines
            .into_iter()
            .map(|line| match line.strip_prefix(b"-") {
                Some(e) => server_error(e),
                None => Value::BulkString(line.to_vec()),
            })
            .collect()
    }
}

/// A server error reply `-<text>` (its code the first word of `text`).
fn server_error(text: &[u8]) -> Value {
    let mut resp = Vec::with_capacity(text.len() + 3);
    resp.push(b'-');
    resp.extend(text.iter().map(|&b| if b == b'\r' { b' ' } else { b }));
    resp.extend_from_slice(b"\r\n");
    redis::parse_redis_value(&resp).unwrap_or(Value::Nil)
}

/// The calls of `invs` (positions and invocations): one per hash slot.
pub(crate) fn by_slot(invs: Vec<(usize, Invocation)>) -> Vec<Call> {
    let mut calls: Vec<Call> = Vec::new();
    let mut slots: HashMap<u16, usize> = HashMap::new();
    for (i, inv) in invs {
        let slot = cluster::slot(inv.key.as_bytes());
        let c = *slots.entry(slot).or_insert_with(|| {
            calls.push(Call::default());
            calls.len() - 1
        });
        calls[c].push(i, inv);
    }
    calls
}

/// All of `invs` in one call (a standalone server), or none when empty.
pub(crate) fn one_call(invs: Vec<(usize, Invocation)>) -> Option<Call> {
    let mut call = Call::default();
    for (i, inv) in invs {
        call.push(i, inv);
    }
    (!call.invs.is_empty()).then_some(call)
}

#[cfg(test)]
mod tests;
