//! Whether the headers the rules read are within the bounds
//! [`MAX_HEADERS`], [`MAX_HEADER_BYTES`] and [`MAX_VALUE_BYTES`]: measured
//! in place, nothing copied.

use http::header::{HeaderName, COOKIE};
use http::HeaderMap;

use super::names::Names;
use super::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_VALUE_BYTES};

/// A header name, parsed when at hand.
type Named<'a> = (&'a str, Option<&'a HeaderName>);

/// Whether the headers named in `names` are within the bounds: the first
/// value of each, then every `Cookie` line, each value at most
/// [`MAX_VALUE_BYTES`], at most [`MAX_HEADERS`] values and
/// [`MAX_HEADER_BYTES`] bytes (names and values) in all. `parsed` is `names`
/// parsed, when at hand.
pub(super) fn fits_named(map: &HeaderMap, names: &[String], parsed: Option<&Names>) -> bool {
    let mut budget = Budget::new();
    let take = |name: &str, value: &[u8]| budget.admit(name, value);
    match parsed {
        Some(parsed) => walk(map, parsed.entries(), take),
        None => walk(map, names.iter().map(|n| (n.as_str(), None)), take),
    }
}

/// Calls `take` with the first value of each named header, then with every
/// `Cookie` line (last, so that a flood of them cannot crowd out the other
/// headers); `false` when any call was.
fn walk<'a>(
    map: &HeaderMap,
    names: impl Iterator<Item = Named<'a>>,
    mut take: impl FnMut(&str, &[u8]) -> bool,
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

    /// Takes `value` of header `name` out of what is left; `false` when it
    /// is longer than [`MAX_VALUE_BYTES`] or does not fit.
    fn admit(&mut self, name: &str, value: &[u8]) -> bool {
        let cost = name.len() + value.len();
        if value.len() > MAX_VALUE_BYTES || self.values == 0 || cost > self.bytes {
            return false;
        }
        self.values -= 1;
        self.bytes -= cost;
        true
    }
}
