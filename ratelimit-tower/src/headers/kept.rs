//! Header values kept per thread, keyed by the header items they were
//! written from, so that requests with the same items reuse a value (a
//! reference count) instead of writing a new one:
//!
//! - `RateLimit-Policy` only changes with the matched rules (ids, quotas,
//!   windows): the last [`POLICIES`] sets of rules are kept.
//! - `RateLimit` on a refusal: a flood of refused requests mostly sees the
//!   same requests left (none) and seconds to wait, so the last one is
//!   kept. (Forwarded requests count down: not kept.)
//!
//! Keys are compared by content, so another layer or a new rule set never
//! reuses a stale value.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;

use http::HeaderValue;
use ratelimit_core::limiter::HeaderItem;

/// How many sets of matched rules each thread keeps a policy for.
const POLICIES: usize = 4;

/// One set of items and its value (`None` when an id is no header value).
struct Entry {
    items: Box<[(Arc<str>, u64, u64)]>,
    value: Option<HeaderValue>,
}

impl Entry {
    fn is(&self, items: &[HeaderItem], params: impl Fn(&HeaderItem) -> (u64, u64)) -> bool {
        self.items.len() == items.len()
            && self.items.iter().zip(items).all(|((id, a, b), h)| {
                (*a, *b) == params(h) && (Arc::ptr_eq(id, &h.id) || **id == *h.id)
            })
    }
}

/// The last entries written, the oldest replaced first.
struct Kept {
    entries: Vec<Entry>,
    /// The slot the next new entry replaces once all are taken.
    next: usize,
}

impl Kept {
    const fn new() -> Self {
        Self {
            entries: Vec::new(),
            next: 0,
        }
    }
}

thread_local! {
    static POLICY: RefCell<Kept> = const { RefCell::new(Kept::new()) };
    static REFUSED: RefCell<Kept> = const { RefCell::new(Kept::new()) };
}

/// The `RateLimit-Policy` value for `items` (not empty), whose items read
/// `params`: a kept one, or `write()`, then kept.
pub(super) fn policy(
    items: &[HeaderItem],
    params: impl Fn(&HeaderItem) -> (u64, u64) + Copy,
    write: impl FnOnce() -> Option<HeaderValue>,
) -> Option<HeaderValue> {
    value(&POLICY, POLICIES, items, params, write)
}

/// The `RateLimit` value of a refusal, as [`policy`].
pub(super) fn refused(
    items: &[HeaderItem],
    params: impl Fn(&HeaderItem) -> (u64, u64) + Copy,
    write: impl FnOnce() -> Option<HeaderValue>,
) -> Option<HeaderValue> {
    value(&REFUSED, 1, items, params, write)
}

fn value(
    kept: &'static LocalKey<RefCell<Kept>>,
    max: usize,
    items: &[HeaderItem],
    params: impl Fn(&HeaderItem) -> (u64, u64) + Copy,
    write: impl FnOnce() -> Option<HeaderValue>,
) -> Option<HeaderValue> {
    let hit = kept.with(|kept| {
        let kept = kept.try_borrow().ok()?;
        let entry = kept.entries.iter().find(|e| e.is(items, params))?;
        Some(entry.value.clone())
    });
    if let Some(value) = hit {
        return value;
    }
    let value = write();
    let entry = Entry {
        items: items
            .iter()
            .map(|h| {
                let (a, b) = params(h);
                (h.id.clone(), a, b)
            })
            .collect(),
        value: value.clone(),
    };
    kept.with(|kept| {
        if let Ok(mut kept) = kept.try_borrow_mut() {
            if kept.entries.len() < max {
                kept.entries.push(entry);
            } else {
                let slot = kept.next;
                kept.entries[slot] = entry;
                kept.next = (slot + 1) % max;
            }
        }
    });
    value
}
