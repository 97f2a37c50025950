//! The `RateLimit-Policy` value, kept per thread for the last few sets of
//! matched rules: it only changes with the rules (ids, quotas, windows), so
//! most requests reuse a value instead of writing a new one.

use std::cell::RefCell;
use std::sync::Arc;

use http::HeaderValue;
use ratelimit_core::verdict::HeaderItem;

/// How many sets of matched rules each thread remembers.
const KEPT: usize = 4;

/// One set of matched rules and its value (`None` when an id is no
/// header value).
struct Kept {
    items: Box<[(Arc<str>, u64, u64)]>,
    value: Option<HeaderValue>,
}

impl Kept {
    fn is(&self, items: &[HeaderItem]) -> bool {
        self.items.len() == items.len()
            && self
                .items
                .iter()
                .zip(items)
                .all(|((id, quota, window_s), h)| {
                    *quota == h.quota
                        && *window_s == h.window_s
                        && (Arc::ptr_eq(id, &h.id) || **id == *h.id)
                })
    }
}

#[derive(Default)]
struct Cache {
    kept: Vec<Kept>,
    /// The slot the next new set replaces once all are taken.
    next: usize,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// The value for `items` (not empty): a kept one, or `write(items)`, then
/// kept.
pub(super) fn value(
    items: &[HeaderItem],
    write: impl FnOnce(&[HeaderItem]) -> Option<HeaderValue>,
) -> Option<HeaderValue> {
    let hit = CACHE.with(|cache| {
        let cache = cache.try_borrow().ok()?;
        let kept = cache.kept.iter().find(|k| k.is(items))?;
        Some(kept.value.clone())
    });
    if let Some(value) = hit {
        return value;
    }
    let value = write(items);
    let kept = Kept {
        items: items
            .iter()
            .map(|h| (h.id.clone(), h.quota, h.window_s))
            .collect(),
        value: value.clone(),
    };
    CACHE.with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            if cache.kept.len() < KEPT {
                cache.kept.push(kept);
            } else {
                let slot = cache.next;
                cache.kept[slot] = kept;
                cache.next = (slot + 1) % KEPT;
            }
        }
    });
    value
}
