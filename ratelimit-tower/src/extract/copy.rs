//! Header values within the bounds [`MAX_HEADERS`], [`MAX_HEADER_BYTES`]
//! and [`MAX_VALUE_BYTES`]: copied for [`RequestAttrs`](ratelimit_core::RequestAttrs),
//! or only measured for the borrowed view.

use http::header::{HeaderName, COOKIE};
use http::HeaderMap;

use super::names::Names;
use super::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_VALUE_BYTES};

/// A header name, parsed when at hand.
type Named<'a> = (&'a str, Option<&'a HeaderName>);

/// The copied headers, and whether any value was cut or dropped.
type Copied = (Vec<(String, Vec<u8>)>, bool);

pub(super) fn copy_headers(map: &HeaderMap) -> Copied {
    copy(map, map.keys().map(|k| (k.as_str(), Some(k))))
}

/// Copies the headers named in `names` only, within the same bounds.
pub(super) fn copy_named(map: &HeaderMap, names: &[String]) -> Copied {
    copy(map, names.iter().map(|n| (n.as_str(), None)))
}

/// Whether the headers named in `names` are within the bounds: what
/// [`copy_named`] would copy whole, without copying. `parsed` is `names`
/// parsed, when at hand.
pub(super) fn fits_named(map: &HeaderMap, names: &[String], parsed: Option<&Names>) -> bool {
    let mut budget = Budget::new();
    let take = |name: &str, value: &[u8]| budget.admit(name, value).is_some_and(|(_, whole)| whole);
    match parsed {
        Some(parsed) => walk(map, parsed.entries(), take),
        None => walk(map, names.iter().map(|n| (n.as_str(), None)), take),
    }
}

/// Copies the first value of each named header, then the `Cookie` lines,
/// within the bounds.
fn copy<'a>(map: &HeaderMap, names: impl Iterator<Item = Named<'a>>) -> Copied {
    let mut out = Vec::new();
    let mut budget = Budget::new();
    let whole = walk(map, names, |name, value| match budget.admit(name, value) {
        Some((value, whole)) => {
            out.push((name.to_owned(), value.to_vec()));
            whole
        }
        None => false,
    });
    (out, !whole)
}

/// Calls `take` with the first value of each named header, then with every
/// `Cookie` line (last, so that a flood of them cannot crowd out the other
/// headers); `false` when any call was.
fn walk<'a, 'm>(
    map: &'m HeaderMap,
    names: impl Iterator<Item = Named<'a>>,
    mut take: impl FnMut(&str, &'m [u8]) -> bool,
) -> bool {
    let mut whole = true;
    let mut cookies = false;
    for (name, parsed) in names {
        if name == COOKIE.as_str() {
            cookies = true;
            continue;
        }
        let value = match parsed {
            Some(parsed) => map.get(parsed),
            None => map.get(name),
        };
        if let Some(v) = value {
            whole &= take(name, v.as_bytes());
        }
    }
    if cookies {
        for v in map.get_all(COOKIE) {
            whole &= take(COOKIE.as_str(), v.as_bytes());
        }
    }
    whole
}

/// What is left of the bounds.
struct Budget {
    values: usize,
    bytes: usize,
}

impl Budget {
    fn new() -> Self {
        Self {
            values: MAX_HEADERS,
            bytes: MAX_HEADER_BYTES,
        }
    }

    /// The value as copied (cut to [`MAX_VALUE_BYTES`]) and whether it is
    /// whole; `None` when it is dropped.
    fn admit<'v>(&mut self, name: &str, value: &'v [u8]) -> Option<(&'v [u8], bool)> {
        let whole = value.len() <= MAX_VALUE_BYTES;
        let value = value.get(..MAX_VALUE_BYTES).unwrap_or(value);
        let cost = name.len() + value.len();
        if self.values == 0 || cost > self.bytes {
            return None;
        }
        self.values -= 1;
        self.bytes -= cost;
        Some((value, whole))
    }
}
