//! Rules added at run time, as stored in Valkey: one string of JSON at
//! `<prefix>control{ctl}:temporary`, `{"rules": [entry, ...]}`, each entry
//! `{"id", "rule" (the rule's JSON, or null once removed), "note",
//! "added_ms", "expires_at_ms"}`.
//!
//! The operator changes it by compare-and-set on the whole value (the
//! script below), so two changes at once never lose one, and writes a
//! random stamp beside it (`temporary_stamp`): followers poll the stamp
//! and read the value only when it changed. Expired entries
//! are dropped at each change and the key expires a minute after the last
//! rule. A removal stays as an entry without a rule until the rule would
//! have expired, so that instances drop it; an instance never drops a
//! rule because the key is missing (Valkey restarted without persistence):
//! it runs it until its `expires_at`. Whatever Valkey returns is
//! untrusted: each rule is validated again, a malformed value is an error.

use ratelimit_core::control::TemporaryRule;
use ratelimit_core::rules::{Rule, RuleSet};
use serde_json::{json, Value};

/// The largest stored value read or written: 512 KiB (100 rules of 5 KiB).
pub(crate) const MAX_BYTES: usize = 512 * 1024;

/// The most entries stored: the rules (at most `TemporaryRule::MAX`) and
/// the removals still kept; the oldest removals go first (every instance
/// applied them within a poll).
pub(crate) const MAX_ENTRIES: usize = 4 * TemporaryRule::MAX;

/// KEYS: the temporary key, its stamp. ARGV: the value read ("" for
/// none), the new value, its expiry (Unix ms), the channel, a new stamp.
/// Writes the new value and stamp when the stored value is still the one
/// read: 1, else 0.
pub(crate) const CAS: &str = r"
assert(#KEYS == 2 and #ARGV == 5, 'temporary expects 2 keys and 5 arguments')
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
redis.call('SET', KEYS[2], ARGV[5], 'PXAT', ARGV[3])
redis.call('PUBLISH', ARGV[4], 'temporary')
return 1
";

/// One stored entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: String,
    /// `None` once removed: kept until `expires_at_ms` so instances drop it.
    pub(crate) rule: Option<Rule>,
    pub(crate) note: String,
    pub(crate) added_ms: u64,
    pub(crate) expires_at_ms: u64,
}

impl Entry {
    /// The entry of a rule added with `note` at `now_ms`.
    pub(crate) fn added(rule: Rule, note: &str, now_ms: u64) -> Self {
        Entry {
            id: rule.id.clone(),
            expires_at_ms: rule.expires_at_ms.unwrap_or(now_ms),
            rule: Some(rule),
            note: note.to_owned(),
            added_ms: now_ms,
        }
    }

    /// The rule as the control lists it, unless removed.
    pub(crate) fn listed(&self) -> Option<TemporaryRule> {
        Some(TemporaryRule {
            rule: self.rule.clone()?,
            note: self.note.clone(),
            added_ms: self.added_ms,
        })
    }
}

/// Drops the oldest removals past [`MAX_ENTRIES`] (entries are kept in
/// the order written, a removal moved last).
pub(crate) fn bound(entries: &mut Vec<Entry>) {
    let mut excess = entries.len().saturating_sub(MAX_ENTRIES);
    entries.retain(|e| {
        let drop = excess > 0 && e.rule.is_none();
        excess -= usize::from(drop);
        !drop
    });
}

/// The stored value of `entries`.
pub(crate) fn encode(entries: &[Entry]) -> String {
    let list: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({"id": e.id, "rule": e.rule.as_ref().map(serde_json::to_value).and_then(Result::ok),
                "note": e.note, "added_ms": e.added_ms, "expires_at_ms": e.expires_at_ms})
        })
        .collect();
    json!({ "rules": list }).to_string()
}

/// The entries of a stored value, each rule validated again at `now_ms`:
/// the entries that decode, and why each other did not (naming its id). A
/// value that is not the control's JSON is an error.
pub(crate) fn decode(s: &str, now_ms: u64) -> Result<(Vec<Entry>, Vec<String>), String> {
    if s.len() > MAX_BYTES {
        return Err(format!("{} bytes, over the limit of {MAX_BYTES}", s.len()));
    }
    let v: Value = serde_json::from_str(s).map_err(|e| format!("not JSON ({e})"))?;
    let list = v
        .get("rules")
        .and_then(Value::as_array)
        .ok_or("no \"rules\" list")?;
    if list.len() > MAX_ENTRIES {
        return Err(format!(
            "{} entries, over the limit of {MAX_ENTRIES}",
            list.len()
        ));
    }
    let (mut entries, mut errors) = (Vec::new(), Vec::new());
    for item in list {
        match entry(item, now_ms) {
            Ok(e) => entries.push(e),
            Err(why) => errors.push(why),
        }
    }
    Ok((entries, errors))
}

fn entry(v: &Value, now_ms: u64) -> Result<Entry, String> {
    let id = v
        .get("id")
        .and_then(Value::as_str)
        .ok_or("an entry without an id")?;
    let num = |k: &str| {
        v.get(k)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("rule {id:?}: field {k:?}: expected a number"))
    };
    let rule = match v.get("rule") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let set =
                RuleSet::from_json_at(&format!("[{r}]"), now_ms).map_err(|e| e.to_string())?;
            let rule = set.rules().first().map(|r| (**r).clone());
            match rule {
                Some(rule) if rule.id == id && rule.expires_at_ms.is_some() => Some(rule),
                _ => {
                    return Err(format!(
                        "rule {id:?}: the stored rule is not the entry's, or has no expires_at"
                    ))
                }
            }
        }
    };
    Ok(Entry {
        id: id.to_owned(),
        rule,
        note: v
            .get("note")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        added_ms: num("added_ms")?,
        expires_at_ms: num("expires_at_ms")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_767_225_600_000;

    fn rule(id: &str) -> Rule {
        let json = format!(
            r#"[{{"id": "{id}", "expression": "true", "algorithm": "fixed_window",
            "limit": 1, "period": "1m", "key": ["ip"], "expires_at": "2026-01-01T01:00:00Z"}}]"#
        );
        (*RuleSet::from_json_at(&json, NOW).unwrap().rules()[0]).clone()
    }

    #[test]
    fn entries_round_trip_removed_ones_included() {
        let mut gone = Entry::added(rule("b"), "", NOW);
        gone.rule = None;
        let entries = vec![Entry::added(rule("a"), "autopilot: surge", NOW), gone];
        let (back, errors) = decode(&encode(&entries), NOW).unwrap();
        assert_eq!((back, errors), (entries, Vec::<String>::new()));
    }

    #[test]
    fn the_oldest_removals_go_first_past_the_bound() {
        let mut gone = Entry::added(rule("x"), "", NOW);
        gone.rule = None;
        let mut entries = vec![gone.clone(); MAX_ENTRIES];
        for (i, e) in entries.iter_mut().enumerate() {
            e.added_ms = i as u64;
        }
        entries.insert(3, Entry::added(rule("a"), "", NOW));
        bound(&mut entries);
        assert_eq!(entries.len(), MAX_ENTRIES);
        assert_eq!(entries[0].added_ms, 1, "the oldest removal dropped");
        assert!(entries.iter().any(|e| e.rule.is_some()), "rules kept");
    }

    #[test]
    fn a_value_of_too_many_entries_is_refused_whole() {
        let one = Entry::added(rule("a"), "", NOW);
        let many = encode(&vec![one; MAX_ENTRIES + 1]);
        assert!(decode(&many, NOW).unwrap_err().contains("over the limit"));
    }

    #[test]
    fn malformed_values_are_errors_and_bad_rules_are_named() {
        for bad in ["", "[]", "{}", "{\"rules\": 3}", "\u{0}"] {
            assert!(decode(bad, NOW).is_err(), "{bad:?}");
        }
        let stored =
            encode(&[Entry::added(rule("a"), "", NOW)]).replace("\"limit\":1", "\"limit\":0");
        let (ok, errors) = decode(&stored, NOW).unwrap();
        assert!(ok.is_empty());
        assert!(
            errors[0].contains("\"a\"") && errors[0].contains("limit"),
            "{errors:?}"
        );
        let other = encode(&[Entry::added(rule("a"), "", NOW)])
            .replace("\"id\":\"a\",\"n", "\"id\":\"z\",\"n");
        assert!(
            decode(&other, NOW).unwrap().1[0].contains("not the entry's"),
            "{other}"
        );
    }
}
