//! The fleet's secret hash key, kept in Valkey.
//!
//! Subjects and distinct values are hashed with a secret key, and the
//! subject's digest is part of every state key's name, so every instance
//! of a fleet must hash with the same key. Without configuration, the key
//! stored at `<prefix>hashkey` (32 hex digits) is the truth, and the
//! instances converge on it. Each instance checks it at start, at every
//! restore of a connection (see [`crate::link`]) and every
//! [`CHECK_EVERY`], in one script:
//!
//! - no key stored (the first instance, or Valkey restarted without
//!   persistence, or the key was deleted): the instance stores its own
//!   with `SET .. NX` (a new one from the operating system's random source
//!   at its first start), so the instances that hashed alike before go on
//!   hashing alike;
//! - a key stored that differs from the instance's (another instance
//!   stored a new one while this one was cut off): the instance adopts it,
//!   logs it at `WARN` and counts it; its limiter then drops the subjects
//!   it holds in memory under the old key.
//!
//! Until the key is first read, checks fail with a `Connection` error and
//! the rules' fail modes answer; meanwhile the limiter hashes what it
//! keeps in memory (`fail_mode: local` counts) with a key of its own, and
//! those counts start afresh once the fleet's key is known.
//!
//! [`ValkeyBuilder::hash_key`] sets the key explicitly instead (the same
//! on every instance): that key is always used and never written to
//! Valkey. The stored key is still read at the same times: one that
//! differs from the configured key (instances without the setting share
//! the fleet's prefix) is logged at `WARN` once and counted at each check,
//! and the configured key is kept.
//!
//! [`ValkeyBuilder::hash_key`]: crate::ValkeyBuilder::hash_key

use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::HashKey;
use redis::Value;
use tokio::sync::Notify;

use crate::key_cell::KeyCell;
use crate::metrics::hash_key_event;
use crate::node::Node;

/// The key's name after the prefix.
pub(crate) const NAME: &str = "hashkey";

/// How often each instance checks the stored key (besides at start and at
/// each restore of a connection).
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(5);

/// KEYS[1] the key's name; ARGV[1] this instance's key in hex; ARGV[2]
/// `write` to store it where no key is (`SET .. NX`), `read` to leave
/// Valkey as it is. Replies `{stored key or '', 1 when this call stored
/// it, the key's type}`; a key of another type is left alone (and no
/// error is raised, so the reply can name it).
const EXCHANGE: &str = r"
assert(#KEYS == 1 and #ARGV == 2, 'hashkey expects 1 key and 2 arguments')
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'string' and t ~= 'none' then
  return {'', 0, t}
end
local created = 0
if ARGV[2] == 'write' and redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  created = 1
end
return {redis.call('GET', KEYS[1]) or '', created, t}
";

/// The fleet's key: set explicitly, or the one stored in Valkey.
#[derive(Debug)]
pub(crate) struct FleetKey {
    explicit: Option<HashKey>,
    /// The key read from Valkey (without an explicit one).
    current: KeyCell,
    /// The stored key last found to differ from the explicit one.
    conflict: Mutex<Option<[u8; 16]>>,
    /// Notified when this is dropped (with the backend): its check stops.
    pub(crate) gone: Arc<Notify>,
}

impl Drop for FleetKey {
    fn drop(&mut self) {
        self.gone.notify_one();
    }
}

impl FleetKey {
    pub(crate) fn new(explicit: Option<HashKey>) -> Self {
        Self {
            explicit,
            current: KeyCell::default(),
            conflict: Mutex::new(None),
            gone: Arc::new(Notify::new()),
        }
    }

    /// Whether the key may change: only one read from Valkey (an explicit
    /// key never does).
    pub(crate) fn changes(&self) -> bool {
        self.explicit.is_none()
    }

    /// The key, once known.
    #[inline]
    pub(crate) fn get(&self) -> Option<HashKey> {
        match self.explicit {
            Some(key) => Some(key),
            None => self.current.get().map(HashKey::new),
        }
    }

    /// Checks the key stored on `node` (which serves `name`'s slot) and
    /// converges on it, as the module docs say.
    pub(crate) async fn sync(
        &self,
        node: &Node,
        name: &str,
        within: Duration,
    ) -> Result<(), String> {
        if let Some(mine) = self.explicit {
            let stored = exchange(node, name, None, within).await?;
            self.compare(mine, stored.key, node, name);
            return Ok(());
        }
        let mine = self.current.get();
        let offer = mine.unwrap_or_else(random_key);
        let stored = exchange(node, name, Some(offer), within).await?;
        let key = stored
            .key
            .ok_or_else(|| node.says(format!("{name}: no key after SET NX")))?;
        match mine {
            None => self.current.set(key),
            Some(k) if k == key => {
                if stored.created {
                    hash_key_event("written_back");
                    tracing::info!(
                        node = %node.addr,
                        key = name,
                        "the fleet's hash key was missing from valkey (restarted without \
                         persistence, or deleted): this instance's written back"
                    );
                }
            }
            Some(_) => {
                self.current.set(key);
                hash_key_event("adopted");
                tracing::warn!(
                    node = %node.addr,
                    key = name,
                    "the fleet's hash key in valkey differs from this instance's (valkey \
                     restarted without persistence and another instance stored a new one): \
                     adopted; subjects counted under the old key start afresh"
                );
            }
        }
        Ok(())
    }

    /// The explicit key against the stored one: a difference is counted at
    /// each check and logged once per stored key.
    fn compare(&self, mine: HashKey, stored: Option<[u8; 16]>, node: &Node, name: &str) {
        let differs = stored.filter(|s| HashKey::new(*s) != mine);
        let mut last = self.conflict.lock().unwrap_or_else(|e| e.into_inner());
        if differs.is_some() {
            hash_key_event("conflict");
            if *last != differs {
                tracing::warn!(
                    node = %node.addr,
                    key = name,
                    "the fleet's hash key in valkey differs from the one configured \
                     (ValkeyBuilder::hash_key): the configured key is kept, and instances \
                     that read the key from valkey count apart from this one (delete the \
                     stored key once every instance has the setting)"
                );
            }
        }
        *last = differs;
    }
}

/// What the key's name holds.
struct Stored {
    key: Option<[u8; 16]>,
    created: bool,
}

/// Runs [`EXCHANGE`] on `node`: offers `offer` (stored where no key is),
/// or only reads with `None`.
async fn exchange(
    node: &Node,
    name: &str,
    offer: Option<[u8; 16]>,
    within: Duration,
) -> Result<Stored, String> {
    let should = "it should hold the fleet's hash key, a string of 32 hex digits \
                  (delete it, or choose another key_prefix)";
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(EXCHANGE).arg(1).arg(name);
    match offer {
        Some(key) => cmd.arg(to_hex(&key)).arg("write"),
        None => cmd.arg("").arg("read"),
    };
    let reply = node.command(&cmd, within).await?;
    let unexpected = || node.says(format!("{name}: unexpected reply {reply:?}"));
    let Value::Array(parts) = &reply else {
        return Err(unexpected());
    };
    let [value, created, kind] = parts.as_slice() else {
        return Err(unexpected());
    };
    let (Some(value), Some(kind)) = (text(value), text(kind)) else {
        return Err(unexpected());
    };
    if kind != "string" && kind != "none" {
        return Err(node.says(format!("{name} holds a {kind}: {should}")));
    }
    let key = match value.as_str() {
        "" => None,
        hex => Some(parse_hex(hex).ok_or_else(|| {
            node.says(format!(
                "{name} holds a string that is not 32 hex digits: {should}"
            ))
        })?),
    };
    Ok(Stored {
        key,
        created: matches!(created, Value::Int(1)),
    })
}

/// A string reply's text.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Okay => Some("OK".into()),
        _ => None,
    }
}

/// 16 random bytes.
fn random_key() -> [u8; 16] {
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
    bytes
}

/// `bytes` in lower-case hex.
fn to_hex(bytes: &[u8; 16]) -> String {
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
        let hex = to_hex(&random_key());
        assert_eq!(hex.len(), 32);
        assert_ne!(hex, to_hex(&random_key()));
        let bytes = parse_hex(&hex).expect("hex");
        assert_eq!(parse_hex(&hex.to_uppercase()), Some(bytes));
        assert_eq!(parse_hex("00"), None);
        assert_eq!(parse_hex(&"g".repeat(32)), None);
        assert_eq!(parse_hex(&"é".repeat(16)), None);
    }
}
