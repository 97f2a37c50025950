//! The header names the published rules read, parsed once: a rule's header
//! read then goes straight to the header map's lookup instead of checking
//! and lower-casing the name on every request.
//!
//! Each thread keeps the names of the last rule set it saw; a request
//! checked against another rule set (another layer, a new publish) parses
//! that one's names, compared by content, so a stale entry is never used.

use std::cell::RefCell;
use std::sync::Arc;

use http::header::HeaderName;

/// The names of one rule set, in its order, each parsed when valid.
#[derive(Debug)]
pub(crate) struct Names {
    names: Box<[(Box<str>, Option<HeaderName>)]>,
}

thread_local! {
    static LAST: RefCell<Option<Arc<Names>>> = const { RefCell::new(None) };
}

impl Names {
    /// The parsed `used` names (`Snapshot::headers_used`); `None` without any.
    pub(crate) fn of(used: &[String]) -> Option<Arc<Self>> {
        if used.is_empty() {
            return None;
        }
        let cached = LAST.with(|last| {
            let last = last.try_borrow().ok()?;
            last.as_ref().filter(|n| n.is(used)).cloned()
        });
        if cached.is_some() {
            return cached;
        }
        let names = Arc::new(Self::parse(used));
        LAST.with(|last| {
            if let Ok(mut last) = last.try_borrow_mut() {
                *last = Some(names.clone());
            }
        });
        Some(names)
    }

    fn parse(used: &[String]) -> Self {
        let names = used
            .iter()
            .map(|n| (n.as_str().into(), HeaderName::from_bytes(n.as_bytes()).ok()))
            .collect();
        Self { names }
    }

    fn is(&self, used: &[String]) -> bool {
        self.names.len() == used.len() && self.names.iter().zip(used).all(|((n, _), u)| **n == **u)
    }

    /// Each name with its parsed form (`None` when it is no valid header
    /// name).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, Option<&HeaderName>)> {
        self.names.iter().map(|(n, h)| (&**n, h.as_ref()))
    }

    /// `name` parsed, when it is one of these names and valid.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&HeaderName> {
        self.position(name)?.1
    }

    /// Where `name` is among these names, and its parsed form (`None`
    /// when it is no valid header name); `None` when it is not one.
    #[inline]
    pub(crate) fn position(&self, name: &str) -> Option<(usize, Option<&HeaderName>)> {
        let i = self.names.iter().position(|(n, _)| **n == *name)?;
        Some((i, self.names[i].1.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn names_are_parsed_once_per_rule_set_and_thread() {
        assert!(Names::of(&[]).is_none());
        let a = Names::of(&used(&["x-user", "cookie"])).unwrap();
        let again = Names::of(&used(&["x-user", "cookie"])).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(a.get("x-user").map(HeaderName::as_str), Some("x-user"));
        assert_eq!(a.get("x-other"), None);
        // Another rule set: its own names, never the previous ones.
        let b = Names::of(&used(&["x-user"])).unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(b.get("cookie"), None);
        let c = Names::of(&used(&["x-tenant", "cookie"])).unwrap();
        assert_eq!(c.get("x-user"), None);
        assert!(c.get("x-tenant").is_some());
    }

    #[test]
    fn an_invalid_name_is_kept_unparsed() {
        let n = Names::of(&used(&["bad name"])).unwrap();
        assert_eq!(n.get("bad name"), None);
        assert_eq!(n.entries().collect::<Vec<_>>(), [("bad name", None)]);
    }
}
