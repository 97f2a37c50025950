//! The fleet's secret hash key, kept in Valkey.
//!
//! Subjects and distinct values are hashed with a secret key, and the
//! subject's digest is part of every state key's name, so every instance
//! of a fleet must hash with the same key. Without configuration, the
//! first instance to reach Valkey creates one at `<prefix>hashkey` (32 hex
//! digits, from the operating system's random source) with `SET .. NX`
//! (in a script that returns the stored key),
//! and every instance reads it from there: once, at start or at its first
//! connection. Until it is read, checks fail with a `Connection` error and
//! the rules' fail modes answer; meanwhile the limiter hashes what it
//! keeps in memory (`fail_mode: local` counts) with a key of its own, and
//! those counts start afresh once the fleet's key is known.
//!
//! This key has no expiry: deleting it (or `FLUSHALL`) makes the next
//! instance to start create another one, and instances then count apart
//! until they are restarted. [`ValkeyBuilder::hash_key`] sets the key
//! explicitly instead (the same on every instance); then nothing is read.
//!
//! [`ValkeyBuilder::hash_key`]: crate::ValkeyBuilder::hash_key

use std::fmt::Write;
use std::sync::OnceLock;
use std::time::Duration;

use ratelimit_core::HashKey;
use redis::Value;

use crate::node::Node;

/// The key's name after the prefix.
pub(crate) const NAME: &str = "hashkey";

/// KEYS[1] the key's name; ARGV[1] a new key in hex. Stores ARGV[1] unless
/// a key is there, and returns the stored key. (`SET .. NX GET` in one
/// command needs Redis 7; a script works everywhere.)
const SET_NX_GET: &str = r"
assert(#KEYS == 1 and #ARGV == 1, 'hashkey expects 1 key and 1 argument')
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
";

/// The fleet's key: set explicitly, or read from Valkey once.
#[derive(Debug, Default)]
pub(crate) struct FleetKey {
    explicit: Option<HashKey>,
    read: OnceLock<HashKey>,
}

impl FleetKey {
    pub(crate) fn new(explicit: Option<HashKey>) -> Self {
        Self {
            explicit,
            read: OnceLock::new(),
        }
    }

    /// The key, once known.
    pub(crate) fn get(&self) -> Option<HashKey> {
        self.explicit.or_else(|| self.read.get().copied())
    }

    /// Reads (or creates) the key on `node`, which serves `name`'s slot.
    pub(crate) async fn read(
        &self,
        node: &Node,
        name: &str,
        within: Duration,
    ) -> Result<(), String> {
        if self.get().is_some() {
            return Ok(());
        }
        let mine = random_hex();
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SET_NX_GET).arg(1).arg(name).arg(&mine);
        let stored = match node.command(&cmd, within).await? {
            Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
            Value::SimpleString(s) => s,
            other => return Err(node.says(format!("{name}: unexpected reply {other:?}"))),
        };
        let key =
            parse_hex(&stored).ok_or_else(|| node.says(format!("{name} is not 32 hex digits")))?;
        let _ = self.read.set(HashKey::new(key));
        Ok(())
    }
}

/// 16 random bytes in hex.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS source failed (not on supported platforms): still secret
        // enough, from the standard library's random hasher keys.
        use std::hash::{BuildHasher, Hasher};
        for (i, half) in bytes.chunks_exact_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            half.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    let mut s = String::with_capacity(32);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn parse_hex(s: &str) -> Option<[u8; 16]> {
    let s = s.as_bytes();
    if s.len() != 32 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 16];
    for (i, pair) in s.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_hex_and_garbage_is_refused() {
        let hex = random_hex();
        assert_eq!(hex.len(), 32);
        assert_ne!(hex, random_hex());
        let bytes = parse_hex(&hex).expect("hex");
        assert_eq!(parse_hex(&hex.to_uppercase()), Some(bytes));
        assert_eq!(parse_hex("00"), None);
        assert_eq!(parse_hex(&"g".repeat(32)), None);
        assert_eq!(parse_hex(&"é".repeat(16)), None);
    }
}
