//! Subjects in the snapshot: hex round trips, junk refused.

use super::*;

#[test]
fn subjects_round_trip_through_hex_and_junk_is_refused() {
    let d = KeyDigest(core::array::from_fn(|i| (i * 17) as u8));
    assert_eq!(parse_subject(&d.to_hex()), Some(d));
    assert_eq!(parse_subject("zz"), None);
    assert_eq!(parse_subject(&"g".repeat(32)), None);
    assert_eq!(parse_subject(&"é".repeat(16)), None);
    assert_eq!(parse_subject("+1234567890abcdef1234567890abcde"), None);
}
