//! The rightmost [`MAX_CHAIN`] entries of the forwarding lines, read
//! without allocating: a fixed ring of parsed entries, and the elements of
//! a line walked in place.

use std::net::IpAddr;

use super::header::{ForwardedHeader, MAX_CHAIN};
use super::node::parse_node;

/// The last [`MAX_CHAIN`] entries pushed (`None`: not an address).
pub(super) struct Chain {
    entries: [Option<IpAddr>; MAX_CHAIN],
    len: usize,
    /// Where the next entry goes.
    next: usize,
}

impl Chain {
    /// The rightmost entries of every line, parsed. Empty entries are left
    /// out.
    pub(super) fn rightmost<L: AsRef<str>>(
        lines: impl IntoIterator<Item = L>,
        header: ForwardedHeader,
    ) -> Self {
        let mut chain = Self {
            entries: [None; MAX_CHAIN],
            len: 0,
            next: 0,
        };
        for line in lines {
            let line = line.as_ref();
            match header {
                // No quoted strings in X-Forwarded-For: a plain comma list.
                ForwardedHeader::XForwardedFor => {
                    for element in line.split(',') {
                        chain.element(element, parse_node);
                    }
                }
                ForwardedHeader::Forwarded => {
                    for element in split_quoted(line, b',') {
                        chain.element(element, |e| forwarded_for(e).and_then(parse_node));
                    }
                }
            }
        }
        chain
    }

    fn element(&mut self, element: &str, parse: impl Fn(&str) -> Option<IpAddr>) {
        let element = element.trim();
        if !element.is_empty() {
            self.entries[self.next] = parse(element);
            self.next = (self.next + 1) % MAX_CHAIN;
            self.len = (self.len + 1).min(MAX_CHAIN);
        }
    }

    /// The entries, rightmost first.
    pub(super) fn rightmost_first(&self) -> impl Iterator<Item = Option<IpAddr>> + '_ {
        (1..=self.len).map(|k| self.entries[(self.next + MAX_CHAIN - k) % MAX_CHAIN])
    }
}

/// Splits `s` at `sep` outside double-quoted strings (a `\` escapes in
/// quotes). A quote still open at the end means the quoting is broken
/// (a client's `for="x` before what a proxy appended): then `s` is split at
/// every `sep`, so the broken part stays one entry and what follows it keeps
/// its own. No node value (address, port, `unknown`, `_obfuscated`) holds a
/// `,` or `;`, so a readable entry never needs its quotes to span one.
pub(super) fn split_quoted(s: &str, sep: u8) -> impl Iterator<Item = &str> {
    let broken = quote_left_open(s.as_bytes());
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let part = rest?;
        let end = match broken {
            true => part.bytes().position(|b| b == sep),
            false => unquoted(part.as_bytes(), sep),
        };
        match end {
            // `sep` is ASCII: both cuts are character boundaries.
            Some(i) => {
                rest = part.get(i + 1..);
                part.get(..i)
            }
            None => {
                rest = None;
                Some(part)
            }
        }
    })
}

/// Whether a double quote is still open at the end of `s`.
fn quote_left_open(s: &[u8]) -> bool {
    scan(s, None) == Err(true)
}

/// The first `sep` outside quotes (`s` starts outside them).
fn unquoted(s: &[u8], sep: u8) -> Option<usize> {
    scan(s, Some(sep)).ok()
}

/// Reads `s` from outside quotes (a backslash escapes the next byte within
/// them): the position of the first `sep` outside quotes, else whether a
/// quote is open at the end.
fn scan(s: &[u8], sep: Option<u8>) -> Result<usize, bool> {
    let mut quoted = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b if Some(b) == sep && !quoted => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err(quoted)
}

/// The `for=` value of one `Forwarded` element.
fn forwarded_for(element: &str) -> Option<&str> {
    split_quoted(element, b';').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        k.trim().eq_ignore_ascii_case("for").then(|| v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitting as first written: one pass, into a `Vec`.
    fn reference(s: &str, sep: u8) -> Vec<&str> {
        let bytes = s.as_bytes();
        let mut parts = Vec::new();
        let mut start = 0;
        let mut i = 0;
        let mut quoted = false;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if quoted => i += 1,
                b'"' => quoted = !quoted,
                b if b == sep && !quoted => {
                    parts.push(s.get(start..i).unwrap_or(""));
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        if quoted {
            return s.split(char::from(sep)).collect();
        }
        parts.push(s.get(start..).unwrap_or(""));
        parts
    }

    #[test]
    fn quoted_splits_as_written() {
        let cases = [
            "",
            ",",
            "a,b",
            r#"for="a,b",c"#,
            r#"for="x, for=1.2.3.4"#,
            r#""a\",b",c"#,
            r#""\"#,
            "é,\"ü\\",
        ];
        for s in cases {
            assert_eq!(
                split_quoted(s, b',').collect::<Vec<_>>(),
                reference(s, b','),
                "{s:?}"
            );
        }
    }

    #[test]
    fn only_the_rightmost_entries_are_kept() {
        let line = (0..MAX_CHAIN + 3)
            .map(|i| format!("10.0.{}.{}", i / 250, i % 250))
            .collect::<Vec<_>>()
            .join(", ");
        let chain = Chain::rightmost(
            [line.as_str(), " , unknown"],
            ForwardedHeader::XForwardedFor,
        );
        let entries: Vec<_> = chain.rightmost_first().collect();
        assert_eq!(entries.len(), MAX_CHAIN);
        assert_eq!(entries[0], None);
        assert_eq!(entries[1], "10.0.0.66".parse().ok());
        assert_eq!(entries[MAX_CHAIN - 1], "10.0.0.4".parse().ok());
    }

    proptest! {
        #[test]
        fn quoted_splits_as_written_for_any_line(s in r#"[,;"\\a= é]{0,24}"#) {
            for sep in [b',', b';'] {
                prop_assert_eq!(split_quoted(&s, sep).collect::<Vec<_>>(), reference(&s, sep));
            }
        }
    }
}
