//! Copying header values within the bounds [`MAX_HEADERS`],
//! [`MAX_HEADER_BYTES`] and [`MAX_VALUE_BYTES`].

use http::header::{HeaderName, COOKIE};
use http::HeaderMap;

use super::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_VALUE_BYTES};

/// The copied headers, and whether any value was cut or dropped.
type Copied = (Vec<(String, Vec<u8>)>, bool);

pub(super) fn copy_headers(map: &HeaderMap) -> Copied {
    copy(map, map.keys().map(HeaderName::as_str))
}

/// Copies the headers named in `names` only, within the same bounds.
pub(super) fn copy_named(map: &HeaderMap, names: &[String]) -> Copied {
    copy(map, names.iter().map(String::as_str))
}

/// Copies the first value of each named header, then the `Cookie` lines,
/// within the bounds: cookies come last so that a flood of them cannot
/// crowd out the other headers.
fn copy<'a>(map: &HeaderMap, names: impl Iterator<Item = &'a str>) -> Copied {
    let mut out = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    let mut whole = true;
    let mut cookies = false;
    for name in names {
        if name == COOKIE.as_str() {
            cookies = true;
            continue;
        }
        if let Some(v) = map.get(name) {
            whole &= push(&mut out, &mut budget, name, v.as_bytes());
        }
    }
    if cookies {
        for v in map.get_all(COOKIE) {
            whole &= push(&mut out, &mut budget, COOKIE.as_str(), v.as_bytes());
        }
    }
    (out, !whole)
}

/// Copies one value within the bounds; `false` when it was cut or dropped.
fn push(out: &mut Vec<(String, Vec<u8>)>, budget: &mut usize, name: &str, value: &[u8]) -> bool {
    let whole = value.len() <= MAX_VALUE_BYTES;
    let value = value.get(..MAX_VALUE_BYTES).unwrap_or(value);
    let cost = name.len() + value.len();
    if out.len() < MAX_HEADERS && cost <= *budget {
        *budget -= cost;
        out.push((name.to_owned(), value.to_vec()));
        whole
    } else {
        false
    }
}
