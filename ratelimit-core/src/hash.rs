//! A keyed hash (SipHash-2-4, from the `siphasher` crate) for request keys
//! and distinct values.
//!
//! Keys are hashed with a secret key so that outsiders cannot craft values
//! that collide, and so that a long value costs no more memory than a short
//! one: every subject is stored under a fixed-size [`KeyDigest`].

use std::fmt;
use std::hash::Hasher;

use siphasher::sip128::{Hasher128, SipHasher24};

/// A 128-bit SipHash key. Every instance of a fleet must use the same one.
///
/// The key must be secret: whoever knows it can craft request keys and
/// `distinct` values offline that land on the same few bits of a distinct
/// map, and be served far past a rule's limit. [`HashKey::DEFAULT`] is
/// public and only fits tests; [`HashKey::random`] (and `Default`) draw a
/// secret one. A [`Limiter`](crate::Limiter) picks its key by itself: the
/// one set with [`LimiterBuilder::hash_key`](crate::LimiterBuilder::hash_key),
/// else the fleet's key that a shared backend provides
/// ([`Backend::hash_key`](crate::backend::Backend::hash_key): the in-memory
/// backend's own random key, the Valkey backend's key kept in Valkey), else
/// a random key of its own.
///
/// # Examples
///
/// ```
/// use ratelimit_core::HashKey;
///
/// let key = HashKey::random();
/// assert_eq!(key.digest(b"203.0.113.7"), key.digest(b"203.0.113.7"));
/// assert_ne!(key.digest(b"203.0.113.7"), HashKey::DEFAULT.digest(b"203.0.113.7"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HashKey {
    k0: u64,
    k1: u64,
}

impl HashKey {
    /// A fixed, public key, for tests and benchmarks that need the same
    /// digests in every run. Never for production: anyone can craft values
    /// that collide under it (see [`HashKey::random`]).
    pub const DEFAULT: HashKey = HashKey {
        k0: 0x7261_7465_6c69_6d69,
        k1: 0x742d_636f_7265_2d31,
    };

    /// A key from 16 secret bytes.
    pub const fn new(bytes: [u8; 16]) -> Self {
        let mut k0 = 0u64;
        let mut k1 = 0u64;
        let mut i = 0;
        while i < 8 {
            k0 |= (bytes[i] as u64) << (8 * i);
            k1 |= (bytes[i + 8] as u64) << (8 * i);
            i += 1;
        }
        Self { k0, k1 }
    }

    /// A secret key from the operating system's random source, different
    /// in every call: for state that lives in this process only (each
    /// in-memory backend draws one). A fleet sharing state needs one key for all its
    /// instances: the Valkey backend keeps one in Valkey.
    ///
    /// Should the operating system's source fail (it does not on supported
    /// platforms), the key comes from the standard library's per-process
    /// random hasher keys instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::HashKey;
    ///
    /// let (a, b) = (HashKey::random(), HashKey::random());
    /// assert_ne!(a.digest(b"203.0.113.7"), b.digest(b"203.0.113.7"));
    /// ```
    pub fn random() -> Self {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            bytes = std_entropy();
        }
        Self::new(bytes)
    }

    /// SipHash-2-4 of `data`.
    pub fn hash(&self, data: &[u8]) -> u64 {
        let mut h = siphasher::sip::SipHasher24::new_with_keys(self.k0, self.k1);
        h.write(data);
        h.finish()
    }

    /// The 128-bit SipHash-2-4 digest of `data`.
    pub fn digest(&self, data: &[u8]) -> KeyDigest {
        let mut h = self.hasher();
        h.write(data);
        h.finish128()
    }

    /// A streaming SipHash-2-4-128 hasher: write parts, then
    /// [`Sip128::finish128`], with no buffer to allocate.
    pub(crate) fn hasher(&self) -> Sip128 {
        Sip128::new(self.k0, self.k1)
    }

    /// The key's two words (for a lock-free comparison).
    pub(crate) fn words(&self) -> (u64, u64) {
        (self.k0, self.k1)
    }

    /// A key derived from this one and `label` (for instance a rule's
    /// namespace), so that digests under different labels are unrelated.
    pub fn derive(&self, label: &[u8]) -> HashKey {
        let d = self.digest(label);
        let mut a = [0u8; 8];
        let mut b = [0u8; 8];
        a.copy_from_slice(&d.0[..8]);
        b.copy_from_slice(&d.0[8..]);
        HashKey {
            k0: u64::from_le_bytes(a),
            k1: u64::from_le_bytes(b),
        }
    }
}

/// A secret key: [`HashKey::random`].
impl Default for HashKey {
    fn default() -> Self {
        Self::random()
    }
}

/// 16 bytes from the standard library's randomly keyed hasher.
fn std_entropy() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_exact_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

impl fmt::Debug for HashKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HashKey(..)")
    }
}

/// The fixed-size digest of a subject's key.
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `KeyDigest(value)`; it has nothing to grow.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyDigest(pub [u8; 16]);

impl KeyDigest {
    /// Lower-case hex, 32 characters.
    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(32);
        for b in self.0 {
            s.push(HEX[(b >> 4) as usize] as char);
            s.push(HEX[(b & 15) as usize] as char);
        }
        s
    }

    /// The first 8 bytes as a number (for sharding).
    pub fn low64(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(b)
    }
}

impl fmt::Debug for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyDigest({})", self.to_hex())
    }
}

impl fmt::Display for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Streaming SipHash-2-4 with a 128-bit output (the `siphasher` crate's).
#[derive(Clone)]
pub(crate) struct Sip128(SipHasher24);

impl Sip128 {
    fn new(k0: u64, k1: u64) -> Self {
        Self(SipHasher24::new_with_keys(k0, k1))
    }

    /// Adds `data`.
    pub(crate) fn write(&mut self, data: &[u8]) {
        Hasher::write(&mut self.0, data);
    }

    /// Adds one byte: the crate's short write (shifted into its pending
    /// word), the same digest as `write(&[b])`.
    pub(crate) fn write_u8(&mut self, b: u8) {
        Hasher::write_u8(&mut self.0, b);
    }

    /// Adds `v`'s 4 bytes, little-endian: the same digest as
    /// `write(&v.to_le_bytes())`, as one short write. (The crate's
    /// `write_u32` hashes the native bytes, hence `to_le`.)
    pub(crate) fn write_u32(&mut self, v: u32) {
        Hasher::write_u32(&mut self.0, v.to_le());
    }

    /// Adds `v`'s 8 bytes, little-endian: `write(&v.to_le_bytes())`.
    pub(crate) fn write_u64(&mut self, v: u64) {
        Hasher::write_u64(&mut self.0, v.to_le());
    }

    /// The 128-bit digest.
    pub(crate) fn finish128(self) -> KeyDigest {
        // The crate's `as_bytes` order (h1, then h2, little-endian), without
        // its call.
        let h = Hasher128::finish128(&self.0);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&h.h1.to_le_bytes());
        out[8..].copy_from_slice(&h.h2.to_le_bytes());
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
mod tests;
