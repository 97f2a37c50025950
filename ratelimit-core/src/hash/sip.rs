//! Streaming SipHash-2-4 with a 128-bit output, for the many short writes
//! of a request key (a 5-byte tag and length, then a value of a few bytes).
//!
//! The same function as the `siphasher` crate's `SipHasher24` 128-bit
//! output (the tests compare them byte for byte over random keys and
//! splits): only the buffering differs. A write of up to 8 bytes known as
//! a number ([`Sip128::write_word`]) is shifted into the pending word
//! instead of copied byte by byte, and no byte is read through a pointer.

use std::fmt;

use crate::KeyDigest;

/// The four words of SipHash state.
#[derive(Clone, Copy)]
struct State {
    v0: u64,
    v1: u64,
    v2: u64,
    v3: u64,
}

impl State {
    #[inline(always)]
    fn round(&mut self) {
        self.v0 = self.v0.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(13) ^ self.v0;
        self.v0 = self.v0.rotate_left(32);
        self.v2 = self.v2.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(16) ^ self.v2;
        self.v0 = self.v0.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(21) ^ self.v0;
        self.v2 = self.v2.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(17) ^ self.v2;
        self.v2 = self.v2.rotate_left(32);
    }

    /// Absorbs one 8-byte word (2 compression rounds).
    #[inline(always)]
    fn compress(&mut self, m: u64) {
        self.v3 ^= m;
        self.round();
        self.round();
        self.v0 ^= m;
    }

    fn xor(&self) -> u64 {
        self.v0 ^ self.v1 ^ self.v2 ^ self.v3
    }
}

/// Streaming SipHash-2-4-128.
#[derive(Clone)]
pub(crate) struct Sip128 {
    state: State,
    /// Bytes written and not yet absorbed, little-endian, `ntail` of them.
    tail: u64,
    ntail: usize,
    length: usize,
}

/// Up to 8 bytes as a little-endian number: two 4-byte reads that may
/// overlap (4 to 8 bytes), or three single bytes that may repeat (1 to 3),
/// instead of a loop over the bytes.
#[inline]
fn le_bytes(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let (lo, hi) = (le_u32(&b[..4]), le_u32(&b[n - 4..]));
        u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
    } else if n > 0 {
        let mid = n / 2;
        u64::from(b[0]) | (u64::from(b[mid]) << (8 * mid)) | (u64::from(b[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

/// 4 bytes as a little-endian number.
#[inline]
fn le_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(b);
    u32::from_le_bytes(a)
}

impl Sip128 {
    pub(crate) fn new(k0: u64, k1: u64) -> Self {
        Self {
            state: State {
                v0: k0 ^ 0x736f_6d65_7073_6575,
                // "dorandom", xor 0xee for the 128-bit output.
                v1: k1 ^ 0x646f_7261_6e64_6f83,
                v2: k0 ^ 0x6c79_6765_6e65_7261,
                v3: k1 ^ 0x7465_6462_7974_6573,
            },
            tail: 0,
            ntail: 0,
            length: 0,
        }
    }

    /// Adds `data`.
    pub(crate) fn write(&mut self, data: &[u8]) {
        self.length = self.length.wrapping_add(data.len());
        let mut rest = data;
        if self.ntail != 0 {
            let need = 8 - self.ntail;
            if rest.len() < need {
                self.tail |= le_bytes(rest) << (8 * self.ntail);
                self.ntail += rest.len();
                return;
            }
            let (head, more) = rest.split_at(need);
            self.state
                .compress(self.tail | (le_bytes(head) << (8 * self.ntail)));
            rest = more;
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.state.compress(u64::from_le_bytes(b));
        }
        let last = words.remainder();
        self.tail = le_bytes(last);
        self.ntail = last.len();
    }

    /// Adds the `n` (at most 8) low bytes of `word`, little-endian: the same
    /// as `write(&word.to_le_bytes()[..n])`, with no byte copied.
    #[inline]
    pub(crate) fn write_word(&mut self, word: u64, n: usize) {
        debug_assert!(n <= 8 && (n == 8 || word >> (8 * n) == 0));
        self.length = self.length.wrapping_add(n);
        // ntail < 8, so the shift stays under 64.
        let shift = (8 * self.ntail) as u32;
        let filled = self.ntail + n;
        if filled < 8 {
            self.tail |= word << shift;
            self.ntail = filled;
        } else {
            self.state.compress(self.tail | (word << shift));
            // The bytes of `word` that did not fit (none when shift is 0).
            self.tail = word.checked_shr(64 - shift).unwrap_or(0);
            self.ntail = filled - 8;
        }
    }

    /// Adds one byte.
    pub(crate) fn write_u8(&mut self, b: u8) {
        self.write_word(u64::from(b), 1);
    }

    /// The 128-bit digest: the first 64-bit half, then the second, each
    /// little-endian.
    pub(crate) fn finish128(self) -> KeyDigest {
        let mut s = self.state;
        let b = ((self.length as u64 & 0xff) << 56) | self.tail;
        s.compress(b);
        s.v2 ^= 0xee;
        for _ in 0..4 {
            s.round();
        }
        let h1 = s.xor();
        s.v1 ^= 0xdd;
        for _ in 0..4 {
            s.round();
        }
        let h2 = s.xor();
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&h1.to_le_bytes());
        out[8..].copy_from_slice(&h2.to_le_bytes());
        KeyDigest(out)
    }
}

impl fmt::Debug for Sip128 {
    /// Shows no state: the hasher holds the secret key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sip128(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use siphasher::sip128::{Hasher128, SipHasher24};
    use std::hash::Hasher;

    /// One write: bytes, or a word of `n` bytes.
    #[derive(Debug, Clone)]
    enum Write {
        Bytes(Vec<u8>),
        Word(u64, usize),
    }

    fn write() -> impl Strategy<Value = Write> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Write::Bytes),
            (any::<u64>(), 0usize..=8).prop_map(|(w, n)| {
                let w = if n == 8 {
                    w
                } else {
                    w & ((1u64 << (8 * n)) - 1)
                };
                Write::Word(w, n)
            }),
        ]
    }

    proptest! {
        #[test]
        fn equals_the_siphasher_crate_over_any_writes(
            k0 in any::<u64>(),
            k1 in any::<u64>(),
            writes in proptest::collection::vec(write(), 0..12),
        ) {
            let mut ours = Sip128::new(k0, k1);
            let mut theirs = SipHasher24::new_with_keys(k0, k1);
            for w in &writes {
                match w {
                    Write::Bytes(b) => {
                        ours.write(b);
                        theirs.write(b);
                    }
                    Write::Word(word, n) => {
                        ours.write_word(*word, *n);
                        theirs.write(&word.to_le_bytes()[..*n]);
                    }
                }
            }
            prop_assert_eq!(ours.finish128().0, theirs.finish128().as_bytes());
        }
    }

    #[test]
    fn short_reads_are_the_bytes_little_endian() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8];
        for n in 0..=8 {
            let want = b[..n]
                .iter()
                .rev()
                .fold(0u64, |a, &x| (a << 8) | u64::from(x));
            assert_eq!(le_bytes(&b[..n]), want, "{n}");
        }
    }

    #[test]
    fn a_word_that_crosses_the_pending_word_keeps_its_high_bytes() {
        for pending in 0..8usize {
            for n in 0..=8usize {
                let word =
                    0x0102_0304_0506_0708u64 & u64::MAX.checked_shr(64 - 8 * n as u32).unwrap_or(0);
                let mut ours = Sip128::new(1, 2);
                let mut theirs = SipHasher24::new_with_keys(1, 2);
                let head = vec![0xaa; pending];
                ours.write(&head);
                theirs.write(&head);
                ours.write_word(word, n);
                theirs.write(&word.to_le_bytes()[..n]);
                ours.write(b"end");
                theirs.write(b"end");
                assert_eq!(
                    ours.finish128().0,
                    theirs.finish128().as_bytes(),
                    "{pending} {n}"
                );
            }
        }
    }
}
