//! The keyed API's [`Key`] trait: the keys a caller supplies (bytes,
//! strings, integers, `()` and tuples of them), written into the limiter's
//! keyed hash.
//!
//! Every value is written as a tag, a length and its bytes, so no two
//! different keys share an encoding: `("ab", "c")` and `("a", "bc")` are
//! different keys. A string is its UTF-8 bytes (`"abc"` and `b"abc"` are the
//! same key), and an integer is its value whatever its type (`7u8`, `7i64`
//! and `7usize` are the same key, on 32- and 64-bit hosts alike).

use crate::hash::Sip128;

const TAG_BYTES: u8 = 1;
const TAG_UINT: u8 = 2;
const TAG_NEG: u8 = 3;
const TAG_TUPLE: u8 = 4;
const TAG_UNIT: u8 = 5;

/// A value that names what a keyed limit counts: a tenant, an API host, a
/// queue, a WebSocket connection.
///
/// Implemented for byte slices and arrays, `str`, `String`, `Vec<u8>`, every
/// integer type, `bool`, `()` (one counter for everyone: an unkeyed limit),
/// tuples of up to four keys, and references, `Box`es and `Arc`s of keys.
/// Implement it for a type of your own by writing its parts:
///
/// ```
/// use ratelimit_core::keyed::{Key, KeyWriter};
///
/// struct Tenant { region: &'static str, id: u64 }
///
/// impl Key for Tenant {
///     fn write_key(&self, out: &mut KeyWriter) {
///         (self.region, self.id).write_key(out);
///     }
/// }
/// ```
pub trait Key {
    /// Writes the key's parts.
    fn write_key(&self, out: &mut KeyWriter);
}

/// Where a [`Key`] writes its parts: a hash state, never a buffer, so a long
/// key costs no memory.
#[derive(Debug)]
pub struct KeyWriter {
    hasher: Sip128,
}

impl KeyWriter {
    pub(crate) fn new(hasher: Sip128) -> Self {
        Self { hasher }
    }

    pub(crate) fn finish(self) -> crate::KeyDigest {
        self.hasher.finish128()
    }

    /// Writes a byte string (or a string's UTF-8 bytes).
    pub fn bytes(&mut self, value: &[u8]) {
        self.hasher.write_u8(TAG_BYTES);
        self.hasher.write(&(value.len() as u64).to_le_bytes());
        self.hasher.write(value);
    }

    /// Writes an integer by its value.
    pub fn int(&mut self, value: i128) {
        if value < 0 {
            self.hasher.write_u8(TAG_NEG);
            self.hasher.write(&value.unsigned_abs().to_le_bytes());
        } else {
            self.uint(value.unsigned_abs());
        }
    }

    /// Writes a non-negative integer by its value.
    pub fn uint(&mut self, value: u128) {
        self.hasher.write_u8(TAG_UINT);
        self.hasher.write(&value.to_le_bytes());
    }

    fn tuple(&mut self, arity: u8) {
        self.hasher.write_u8(TAG_TUPLE);
        self.hasher.write_u8(arity);
    }
}

impl Key for [u8] {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(self);
    }
}

impl<const N: usize> Key for [u8; N] {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(self);
    }
}

impl Key for Vec<u8> {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(self);
    }
}

impl Key for str {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(self.as_bytes());
    }
}

impl Key for String {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(self.as_bytes());
    }
}

impl Key for () {
    fn write_key(&self, out: &mut KeyWriter) {
        out.hasher.write_u8(TAG_UNIT);
    }
}

impl Key for bool {
    fn write_key(&self, out: &mut KeyWriter) {
        out.uint(u128::from(*self));
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn write_key(&self, out: &mut KeyWriter) {
                out.uint(*self as u128);
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, u128, usize);

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn write_key(&self, out: &mut KeyWriter) {
                out.int(*self as i128);
            }
        }
    )*};
}
signed!(i8, i16, i32, i64, i128, isize);

impl<K: Key + ?Sized> Key for &K {
    fn write_key(&self, out: &mut KeyWriter) {
        (**self).write_key(out);
    }
}

impl<K: Key + ?Sized> Key for Box<K> {
    fn write_key(&self, out: &mut KeyWriter) {
        (**self).write_key(out);
    }
}

impl<K: Key + ?Sized> Key for std::sync::Arc<K> {
    fn write_key(&self, out: &mut KeyWriter) {
        (**self).write_key(out);
    }
}

macro_rules! tuple {
    ($n:literal; $($name:ident),+) => {
        impl<$($name: Key),+> Key for ($($name,)+) {
            #[allow(non_snake_case)]
            fn write_key(&self, out: &mut KeyWriter) {
                out.tuple($n);
                let ($($name,)+) = self;
                $($name.write_key(out);)+
            }
        }
    };
}
tuple!(1; A);
tuple!(2; A, B);
tuple!(3; A, B, C);
tuple!(4; A, B, C, D);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HashKey, KeyDigest};

    fn digest<K: Key + ?Sized>(k: &K) -> KeyDigest {
        let mut w = KeyWriter::new(HashKey::DEFAULT.hasher());
        k.write_key(&mut w);
        w.finish()
    }

    #[test]
    fn strings_and_bytes_with_the_same_content_are_one_key() {
        assert_eq!(digest("abc"), digest(b"abc"));
        assert_eq!(digest(&String::from("abc")), digest(&b"abc".to_vec()));
    }

    #[test]
    fn integers_are_keyed_by_value_not_type() {
        assert_eq!(digest(&7u8), digest(&7i64));
        assert_eq!(digest(&7usize), digest(&7u128));
        assert_ne!(digest(&-7i32), digest(&7i32));
        assert_ne!(digest(&1u8), digest(&2u8));
        assert_eq!(digest(&true), digest(&1u8));
    }

    #[test]
    fn tuple_parts_do_not_run_together() {
        assert_ne!(digest(&("ab", "c")), digest(&("a", "bc")));
        assert_ne!(digest(&("a",)), digest("a"));
        assert_ne!(digest(&(("a", "b"), "c")), digest(&("a", ("b", "c"))));
        assert_ne!(digest(&()), digest(""));
        assert_ne!(digest(&1u32), digest("\u{1}"));
    }
}
