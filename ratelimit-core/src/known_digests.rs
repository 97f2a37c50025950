//! Digests recorded before the hash moved to the `siphasher` crate: request
//! subjects, rule namespaces and distinct bits are stored in Valkey under
//! these values, so a change here would orphan every live counter of a fleet.
//! A unit test: the incremental hasher and the fallback key are
//! crate-private.

use std::time::Duration;

use crate::rules::RuleBuilder;
use crate::subject::{fallback, subject, KeyOutcome};
use crate::{HashKey, RequestAttrs};

fn msg(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

/// (length, 128-bit digest, 64-bit hash) under [`HashKey::DEFAULT`]:
/// lengths around the 8-byte block and past 255 (the length byte wraps).
const DEFAULT_KEY: [(usize, &str, u64); 13] = [
    (0, "fa492e1b8570199c42867607d0acbcc2", 0x0be2_233c_61c4_4a5a),
    (1, "a5dbeb1ea8606874d67d50933e869b83", 0xdc14_9ddf_f0dd_3052),
    (7, "baddd57aa17264b78034bd236d74e04d", 0x7b99_70aa_6fd4_109b),
    (8, "9caf92faf3029fd4a4dfa8ec0cf6f3db", 0x2ae6_db64_0706_eaba),
    (9, "caf357143bceb13fe9af3361bb01d677", 0xbfec_894a_8b72_b592),
    (
        15,
        "650d19f3a140557f4825004b18f74658",
        0x44fe_3e16_7fba_e287,
    ),
    (
        16,
        "9808771f771c3ac8de84dbdd2ecac546",
        0xdcac_9b15_ada5_9742,
    ),
    (
        17,
        "26008919fcac6f7478b60bb4d9db786c",
        0x61d9_798b_97f3_d44f,
    ),
    (
        31,
        "b1ac5b824d41f176dcabf93bbd04c52d",
        0x7cec_a101_7521_c5be,
    ),
    (
        64,
        "114ce3fa0795b120df4ff50270f7145e",
        0xd652_1d7e_e49f_0569,
    ),
    (
        255,
        "c85131773f663479c72d61a29d0799d3",
        0x1923_e39f_e039_1c9e,
    ),
    (
        256,
        "46055b2d29860e2dec7464fedbae0c1e",
        0x9e30_c427_d9ac_52db,
    ),
    (
        300,
        "a4e95aa3f33f126b02c542a5c4987d5d",
        0xffaf_98d4_faa1_68cc,
    ),
];

#[test]
fn digests_and_hashes_are_the_recorded_ones() {
    let k = HashKey::DEFAULT;
    for (n, digest, hash) in DEFAULT_KEY {
        assert_eq!(k.digest(&msg(n)).to_hex(), digest, "digest of {n} bytes");
        assert_eq!(k.hash(&msg(n)), hash, "hash of {n} bytes");
    }
}

#[test]
fn derived_and_secret_keys_are_the_recorded_ones() {
    let d = HashKey::DEFAULT.derive(b"api|fixed_window|60000");
    assert_eq!(
        d.digest(b"203.0.113.7").to_hex(),
        "0b9cdc52d38c6a2aeec7b92937ed1583"
    );
    assert_eq!(d.hash(b"/login"), 0x92cb_0db8_c79a_0036);
    let secret = HashKey::new(*b"0123456789abcdef");
    assert_eq!(
        secret.digest(b"203.0.113.7").to_hex(),
        "94c48c99533ae80f16609d5a5ba05990"
    );
    let mut h = secret.hasher();
    h.write(b"ab");
    h.write_u8(0xff);
    h.write(&msg(20));
    assert_eq!(h.finish128().to_hex(), "26e3007e7a86cafb614a93822bef9613");
}

#[test]
fn request_subjects_are_the_recorded_ones() {
    let k = HashKey::DEFAULT;
    let rule = RuleBuilder::new("api")
        .fixed_window(5, Duration::from_secs(60))
        .key(["ip", "header:x-tenant"])
        .build()
        .expect("rule");
    let req = RequestAttrs::new("203.0.113.7".parse().expect("ip")).with_header("x-tenant", "acme");
    let KeyOutcome::Subject(s) = subject(&rule, &req, &k, false) else {
        panic!("no subject");
    };
    assert_eq!(s.to_hex(), "e6b414ea373686310fd31da6c69fb0dd");
    let req6 = RequestAttrs::new("2001:db8::1".parse().expect("ip"));
    assert_eq!(
        fallback(&req6, &k).to_hex(),
        "ebd5b09c7245baabb084ba6b06901278"
    );
}

/// The subject of a rule keyed on each kind of part alone, on a request
/// that carries them all: each pins its part's tag (a part written under
/// another kind's tag, or a forgotten one under 0, gives another digest).
const PART_SUBJECTS: [(&str, &str); 13] = [
    ("ip", "817f97e7a0be23bf5e69bc46e98abc60"),
    ("jwt_claim:sub", "c8c0155d799953830d180c207ffa8400"),
    ("header:x-tenant", "a6765cabda345fe756f72a8af6f1d34b"),
    ("cookie:session", "3ed3a608df1e744636fb5f0c691d3e06"),
    ("query:page", "da8bb7f03892ed2f2087e643370bc97e"),
    ("host", "eac30dc0a83bb911f123e9266089b91d"),
    ("method", "a4a88319b19b4f4b973ef9080c2265c2"),
    ("country", "ab1f631f5efde78adc87772503b5967c"),
    ("asnum", "ec6900946dee365826653f646707f98c"),
    ("ja4", "bba99e282e493a81676d371c442b3677"),
    ("locale", "f0d27aa698f1e9b35097f7130087eaa1"),
    ("app:plan", "cc52306862980cf3a8ae654708f32cea"),
    ("constant", "2e56bf0081869439241fd6e74167e438"),
];

#[test]
fn every_key_part_tag_is_the_recorded_one() {
    let mut req = RequestAttrs::new("203.0.113.7".parse().expect("ip"))
        .with_header("x-tenant", "acme")
        .with_header("cookie", "session=s1")
        .with_query("page=2")
        .with_jwt_claims([("sub".to_owned(), "u1".to_owned())].into())
        .with_app_value("plan", "gold");
    req.country = Some("FR".into());
    req.asnum = Some("64500".into());
    req.ja4 = Some("t13d1516h2".into());
    req.locale = Some("fr-FR".into());
    let mut seen = Vec::new();
    for (part, digest) in PART_SUBJECTS {
        let rule = RuleBuilder::new("api")
            .fixed_window(5, Duration::from_secs(60))
            .key([part])
            .build()
            .expect("rule");
        let KeyOutcome::Subject(s) = subject(&rule, &req, &HashKey::DEFAULT, false) else {
            panic!("no subject for {part}");
        };
        seen.push((part, s, digest));
    }
    for (i, (part, s, digest)) in seen.iter().enumerate() {
        assert_eq!(s.to_hex(), *digest, "subject keyed on {part}");
        assert!(
            seen[..i].iter().all(|o| o.1 != *s),
            "{part} shares a subject"
        );
    }
}
