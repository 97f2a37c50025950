//! Whether the headers the rules read are within the bounds
//! [`MAX_HEADERS`], [`MAX_HEADER_BYTES`] and [`MAX_VALUE_BYTES`]: measured
//! in place, nothing copied.

use http::header::{HeaderName, COOKIE};
use http::{HeaderMap, HeaderValue};

use super::names::Names;
use super::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_VALUE_BYTES};

/// A header name, parsed when at hand.
type Named<'a> = (&'a str, Option<&'a HeaderName>);

/// Whether the headers named in `names` are within the bounds: the first
/// value of each, then every `Cookie` line, each value at most
/// [`MAX_VALUE_BYTES`], at most [`MAX_HEADERS`] values and
/// [`MAX_HEADER_BYTES`] bytes (names and values) in all. Each name's first
/// value is kept in `firsts` for the view.
pub(super) fn fits_named<'m>(map: &'m HeaderMap, names: &Names, firsts: &mut Firsts<'m>) -> bool {
    let mut budget = Budget::new();
    let take = |name: &str, value: &[u8]| budget.admit(name, value);
    walk(map, names.entries(), take, firsts)
}

/// How many of the names' first values a view keeps from the walk.
const KEPT: usize = 4;

/// The first value of each of the first [`KEPT`] names the rules read (in
/// the order of [`Names`]), as the bounds' walk found them: a rule's read
/// of one of these headers then costs no second lookup in the header map.
/// `Cookie`'s lines are walked apart and not kept.
#[derive(Debug, Default)]
pub(super) struct Firsts<'m> {
    values: [Option<&'m HeaderValue>; KEPT],
    /// Bit `i` set: `values[i]` is the walk's answer for name `i`.
    known: u8,
}

impl<'m> Firsts<'m> {
    #[inline]
    fn keep(&mut self, i: usize, value: Option<&'m HeaderValue>) {
        if i < KEPT {
            self.values[i] = value;
            self.known |= 1 << i;
        }
    }

    /// The first value of name `i`, when the walk kept it (`Some(None)`:
    /// the request has no such header).
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<Option<&'m HeaderValue>> {
        (i < KEPT && self.known & (1 << i) != 0).then(|| self.values[i])
    }
}

/// Calls `take` with the first value of each named header, then with every
/// `Cookie` line (last, so that a flood of them cannot crowd out the other
/// headers); `false` when any call was.
fn walk<'a, 'm>(
    map: &'m HeaderMap,
    names: impl Iterator<Item = Named<'a>>,
    mut take: impl FnMut(&str, &[u8]) -> bool,
    firsts: &mut Firsts<'m>,
) -> bool {
    let mut whole = true;
    let mut cookies = false;
    for (i, (name, parsed)) in names.enumerate() {
        if name == COOKIE.as_str() {
            cookies = true;
            continue;
        }
        let value = match parsed {
            Some(parsed) => map.get(parsed),
            None => map.get(name),
        };
        firsts.keep(i, value);
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
