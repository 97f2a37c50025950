//! The JSON lines a logger usually writes, read without serde: one pass
//! over the line that finds each field's raw text, as [`Fields`]
//! holds it.
//!
//! Only a plain subset of JSON is read here: an object whose keys and
//! strings hold no escape (`\`), whose values are strings, numbers,
//! `true`, `false`, `null`, or flat objects of those, each field named at
//! most once. Anything else (an escape, an array, a nested object in an
//! object's value, a syntax error, a field named twice) answers `None`
//! and the line is read by serde_json, which decides: this reader never
//! refuses a line nor gives a field a text that serde_json would not.

use super::fields::Fields;

/// The bytes JSON counts as white space.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Where the first byte that ends a string's plain run is: the closing
/// quote, an escape's `\`, or a control character (which JSON refuses
/// unescaped). Eight bytes at a time: a line's strings are short, and a
/// loop per byte spends its time mispredicting where one ends.
fn stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `x` below `n`, exact up to the first
    // (a borrow can only mark bytes after a true one).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let hit = below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1)
            | below(x, 0x20);
        if hit != 0 {
            return Some(at + hit.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let is_stop = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
    Some(at + bytes.get(at..)?.iter().position(is_stop)?)
}

/// A position in a text known to be UTF-8; every step checks its bounds.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips white space, then takes `b` when it is next.
    fn eat(&mut self, b: u8) -> bool {
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
        let next = self.peek() == Some(b);
        self.at += usize::from(next);
        next
    }

    /// Skips ASCII digits; how many.
    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    /// A string without escapes or control characters, after its opening
    /// quote: its content.
    fn string(&mut self) -> Option<&'a str> {
        let rest = self.text.as_bytes().get(self.at..)?;
        let len = stop(rest)?;
        let content = self.text.get(self.at..self.at + len)?;
        self.at += len + 1;
        (rest[len] == b'"').then_some(content)
    }

    /// A number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        self.at += usize::from(self.peek() == Some(b'-'));
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => _ = self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            (self.digits() > 0).then_some(())?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            self.at += usize::from(matches!(self.peek(), Some(b'+' | b'-')));
            (self.digits() > 0).then_some(())?;
        }
        Some(())
    }

    /// `word` (`true`, `false`, `null`), its first letter already seen.
    fn word(&mut self, word: &str) -> Option<()> {
        let end = self.at + word.len();
        (self.text.get(self.at..end) == Some(word)).then(|| self.at = end)
    }

    /// One value of the plain subset, flat objects only when `nest`: its
    /// raw text (white space skipped before it, none after).
    fn value(&mut self, nest: bool) -> Option<&'a str> {
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.at += 1;
                self.string()?;
            }
            b'-' | b'0'..=b'9' => self.number()?,
            b't' => self.word("true")?,
            b'f' => self.word("false")?,
            b'n' => self.word("null")?,
            b'{' if nest => self.object(false, |_, _| Some(()))?,
            _ => return None,
        }
        self.text.get(start..self.at)
    }

    /// An object of the plain subset (values nested one level when
    /// `nest`), each key and raw value given to `each`.
    fn object(
        &mut self,
        nest: bool,
        mut each: impl FnMut(&'a str, &'a str) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            if !self.eat(b'"') {
                return None;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            each(key, self.value(nest)?)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// Only white space is left.
    fn at_end(&mut self) -> bool {
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
        self.at == self.text.len()
    }
}

/// The fields of `line` when it is in the plain subset.
pub(super) fn fields(line: &str) -> Option<Fields<'_>> {
    let mut f = Fields::default();
    let mut seen = 0u16;
    let mut c = Cursor { text: line, at: 0 };
    c.object(true, |key, raw| {
        let Some(i) = Fields::index(key) else {
            return Some(());
        };
        if seen & (1 << i) != 0 {
            // serde_json refuses a field named twice: it says so.
            return None;
        }
        seen |= 1 << i;
        *f.slot(i) = (raw != "null").then_some(raw);
        Some(())
    })?;
    c.at_end().then_some(f)
}

/// An object whose values are all strings without escapes: `each` of its
/// pairs, in order; `None` for anything else.
pub(super) fn pairs<'a>(raw: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> Option<()> {
    let mut c = Cursor { text: raw, at: 0 };
    c.object(false, |key, value| {
        each(key, value.strip_prefix('"')?.strip_suffix('"')?);
        Some(())
    })?;
    c.at_end().then_some(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn eight_bytes_at_a_time_stop_where_one_at_a_time_does(
            bytes in prop::collection::vec(
                prop_oneof![4 => 0x20u8..=0xff, 1 => Just(b'"'), 1 => Just(b'\\'), 1 => 0u8..0x20],
                0..40,
            ),
        ) {
            let one = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(super::stop(&bytes), one);
        }
    }
}
