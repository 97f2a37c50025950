//! SipHash against the reference vectors, streaming against one shot, and
//! hash keys.

use super::*;

#[test]
fn matches_the_siphash_reference_vectors() {
    // Key 00..0f, message 00..(n-1): vectors from the SipHash paper.
    let key: [u8; 16] = core::array::from_fn(|i| i as u8);
    let k = HashKey::new(key);
    assert_eq!(k.hash(&[]), 0x726f_db47_dd0e_0e31);
    let msg: Vec<u8> = (0..15).collect();
    assert_eq!(k.hash(&msg), 0xa129_ca61_49be_45e5);
    let msg: Vec<u8> = (0..8).collect();
    assert_eq!(k.hash(&msg), 0x93f5_f579_9a93_2462);
}

#[test]
fn matches_the_siphash128_reference_vectors() {
    // vectors_sip128 of the reference implementation: key 00..0f,
    // message 00..(n-1).
    let k = HashKey::new(core::array::from_fn(|i| i as u8));
    let hex = |n: usize| k.digest(&(0..n as u8).collect::<Vec<u8>>()).to_hex();
    assert_eq!(hex(0), "a3817f04ba25a8e66df67214c7550293");
    assert_eq!(hex(1), "da87c1d86b99af44347659119b22fc45");
}

#[test]
fn streaming_equals_one_shot() {
    let k = HashKey::DEFAULT;
    let data: Vec<u8> = (0..100).collect();
    for split in [0, 1, 3, 7, 8, 9, 15, 16, 17, 50, 99, 100] {
        let mut h = k.hasher();
        h.write(&data[..split]);
        h.write(&data[split..]);
        assert_eq!(h.finish128(), k.digest(&data), "split {split}");
    }
}

#[test]
fn short_writes_equal_their_bytes_at_every_offset() {
    let k = HashKey::new([3; 16]);
    for pending in 0..16usize {
        let head: Vec<u8> = (0..pending as u8).collect();
        let (a, b, c) = (0xa7u8, 0x0403_0201u32, 0x0807_0605_0403_0201u64);
        let mut short = k.hasher();
        short.write(&head);
        short.write_u8(a);
        short.write_u32(b);
        short.write_u64(c);
        short.write(b"tail");
        let mut bytes = k.hasher();
        bytes.write(&head);
        bytes.write(&[a]);
        bytes.write(&b.to_le_bytes());
        bytes.write(&c.to_le_bytes());
        bytes.write(b"tail");
        assert_eq!(short.finish128(), bytes.finish128(), "{pending}");
    }
}

#[test]
fn random_keys_differ_and_are_not_the_public_one() {
    let (a, b) = (HashKey::random(), HashKey::default());
    assert_ne!(a, b);
    assert_ne!(a, HashKey::DEFAULT);
    assert_ne!(b, HashKey::DEFAULT);
    assert_ne!(std_entropy(), std_entropy());
}

#[test]
fn different_keys_give_different_digests() {
    let a = HashKey::DEFAULT.digest(b"203.0.113.7");
    let b = HashKey::new([9; 16]).digest(b"203.0.113.7");
    assert_ne!(a, b);
    assert_eq!(a.to_hex().len(), 32);
}
