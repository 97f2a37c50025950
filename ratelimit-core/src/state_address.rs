//! The state address: where one subject of one rule version lives in this
//! process, its state key (the subject itself is `subject.rs`).

use crate::KeyDigest;

/// The digest naming a namespace's storage in a shared backend:
/// [`Check::namespace_digest_of`](crate::backend::Check::namespace_digest_of).
pub(crate) fn namespace_digest(namespace: &str) -> KeyDigest {
    crate::HashKey::DEFAULT.digest(namespace.as_bytes())
}

/// The key of (namespace, subject):
/// [`Check::state_key_of`](crate::backend::Check::state_key_of).
pub(crate) fn state_key(namespace: &str, subject: &KeyDigest) -> KeyDigest {
    state_key_with(&namespace_digest(namespace), subject)
}

/// [`state_key`] with the namespace's digest already computed: the subject
/// xor the namespace digest, then a bijective mix of the two halves. No
/// second SipHash: a handful of instructions instead of a few hundred.
///
/// Why that suffices. A subject is a SipHash-2-4-128 digest under the
/// limiter's secret key (a keyed pseudo-random function), so to whoever
/// does not know the key it is 128 uniform bits. `mix` is a bijection of
/// 128 bits, so:
/// - within one namespace, distinct subjects never share a state key
///   (`s ^ n` is injective in `s`, and so is `mix`);
/// - across namespaces, `(n1, s1)` and `(n2, s2)` share one exactly when
///   `s1 ^ s2 == n1 ^ n2`: for subjects of the secret key that is a chance
///   of 2^-128 per pair (a SipHash collision is no likelier), and the
///   namespace digests differ unless two namespace strings collide under
///   SipHash (2^-128 as well);
/// - state keys are uniform (a uniform value xor a constant, through a
///   bijection), so shards and table slots stay evenly loaded, and an
///   outsider cannot aim requests at one shard without the secret key.
///
/// The mix (murmur3's 64-bit finalizer on each half, the low half's result
/// folded into the high half) is not needed for any of that with secret
/// subjects; it spreads subjects that are not hash outputs (tests, tools
/// building digests by hand) over the shards too.
pub(crate) fn state_key_with(ns_digest: &KeyDigest, subject: &KeyDigest) -> KeyDigest {
    let (s_lo, s_hi) = halves(subject);
    let (n_lo, n_hi) = halves(ns_digest);
    let lo = fmix64(s_lo ^ n_lo);
    let hi = fmix64(s_hi ^ n_hi ^ lo);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    KeyDigest(out)
}

/// The two little-endian 64-bit halves of a digest.
fn halves(d: &KeyDigest) -> (u64, u64) {
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 8];
    lo.copy_from_slice(&d.0[..8]);
    hi.copy_from_slice(&d.0[8..]);
    (u64::from_le_bytes(lo), u64::from_le_bytes(hi))
}

/// murmur3's 64-bit finalizer: a bijection (each step is invertible).
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashKey;

    /// The inverse of [`fmix64`]: proves it a bijection on the values tried.
    fn unfmix64(mut x: u64) -> u64 {
        // x ^ (x >> 33) is its own inverse for a shift of 33 or more.
        x ^= x >> 33;
        x = x.wrapping_mul(inverse(0xc4ce_b9fe_1a85_ec53));
        x ^= x >> 33;
        x = x.wrapping_mul(inverse(0xff51_afd7_ed55_8ccd));
        x ^ (x >> 33)
    }

    /// The multiplicative inverse of an odd number modulo 2^64 (Newton).
    fn inverse(a: u64) -> u64 {
        let mut x = a;
        for _ in 0..6 {
            x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        }
        x
    }

    #[test]
    fn the_mix_is_invertible_so_one_namespace_never_merges_subjects() {
        let ns = namespace_digest("login:sw:60");
        let (n_lo, n_hi) = halves(&ns);
        for i in 0..2000u32 {
            let s = HashKey::DEFAULT.digest(&i.to_le_bytes());
            let (lo, hi) = halves(&state_key_with(&ns, &s));
            let s_lo = unfmix64(lo) ^ n_lo;
            let s_hi = unfmix64(hi) ^ lo ^ n_hi;
            assert_eq!((s_lo, s_hi), halves(&s), "subject {i}");
        }
        // Subjects that differ in one bit only (not hash outputs) too.
        let base = KeyDigest([0; 16]);
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(state_key_with(&ns, &base)));
        for bit in 0..128 {
            let mut d = base;
            d.0[bit / 8] ^= 1 << (bit % 8);
            assert!(seen.insert(state_key_with(&ns, &d)), "bit {bit}");
        }
    }

    #[test]
    fn namespaces_separate_one_subject() {
        let s = HashKey::new([7; 16]).digest(b"203.0.113.7");
        let a = state_key("login:sw:60", &s);
        let b = state_key("login:sw:61", &s);
        let c = state_key("api:fw:60", &s);
        assert!(a != b && b != c && a != c);
        assert_ne!(a, s);
        assert_eq!(a, state_key_with(&namespace_digest("login:sw:60"), &s));
    }

    #[test]
    fn state_keys_spread_over_shards() {
        // 64 shards by the low bits, as the stores pick them: sequential
        // hand-made subjects land evenly too.
        let ns = namespace_digest("api:fw:60");
        let mut counts = [0u32; 64];
        for i in 0..64_000u64 {
            let mut d = [0u8; 16];
            d[..8].copy_from_slice(&i.to_le_bytes());
            counts[(state_key_with(&ns, &KeyDigest(d)).low64() % 64) as usize] += 1;
        }
        let (min, max) = (counts.iter().min(), counts.iter().max());
        assert!(min >= Some(&850) && max <= Some(&1150), "{counts:?}");
    }
}
