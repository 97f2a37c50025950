use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

fn k(n: u8) -> KeyDigest {
    KeyDigest([n; 16])
}

#[test]
fn evicts_idle_before_refusing() {
    let mut m: Lru<u32> = Lru::new(2);
    // With 2 entries the sampled run sees both: the outcome is certain.
    m.entry(k(1), 0, WhenFull::Refuse, || 1)
        .unwrap()
        .set_idle_at(50);
    m.entry(k(2), 0, WhenFull::Refuse, || 2)
        .unwrap()
        .set_idle_at(500);
    assert!(
        m.entry(k(3), 10, WhenFull::Refuse, || 3).is_none(),
        "nothing idle at 10"
    );
    let e = m.entry(k(3), 60, WhenFull::Refuse, || 3).unwrap();
    assert_eq!(e.how, Inserted::New);
    assert!(m.peek(&k(1)).is_none() && m.peek(&k(2)).is_some());
}

#[test]
fn evict_lru_takes_the_least_recently_used() {
    let mut m: Lru<u32> = Lru::new(2);
    for n in [1, 2] {
        m.entry(k(n), 0, WhenFull::EvictLru, || n as u32);
        m.set_idle_at(&k(n), u64::MAX);
    }
    m.get_mut(&k(1));
    let e = m.entry(k(3), 0, WhenFull::EvictLru, || 3).unwrap();
    assert_eq!(e.how, Inserted::EvictedLive);
    assert!(m.peek(&k(2)).is_none() && m.peek(&k(1)).is_some());
    assert_eq!(m.len(), 2);
}

/// `found` then `insert_absent` do what one `entry` does: a hit marked as
/// just used, a miss changing nothing, a new key placed (and the least
/// recently used evicted when full).
#[test]
fn found_and_insert_absent_split_entry() {
    let mut m: Lru<u32> = Lru::new(2);
    assert!(m.found(&k(1)).is_none());
    assert_eq!(m.len(), 0, "a miss inserts nothing");
    for n in [1, 2] {
        let mut e = m
            .insert_absent(k(n), 0, WhenFull::EvictLru, || n as u32)
            .unwrap();
        assert_eq!((e.how, e.idle_at()), (Inserted::New, 0));
        e.set_idle_at(u64::MAX);
    }
    let e = m.found(&k(1)).unwrap();
    assert_eq!(
        (*e.value, e.how, e.idle_at()),
        (1, Inserted::Found, IDLE_MAX)
    );
    // k(1) was just used: k(2) goes.
    let mut e = m.insert_absent(k(3), 0, WhenFull::EvictLru, || 3).unwrap();
    assert_eq!(e.how, Inserted::EvictedLive);
    assert_eq!(e.evicted.take(), Some((k(2), 2)));
    e.set_idle_at(u64::MAX);
    assert!(m.peek(&k(2)).is_none() && m.peek(&k(1)).is_some());
    let refused = m.insert_absent(k(4), 0, WhenFull::Refuse, || 4);
    assert!(refused.is_none(), "nothing idle: refused");
    assert_eq!(m.len(), 2);
}

#[test]
fn remove_keeps_lookups_consistent() {
    let mut m: Lru<u32> = Lru::new(4);
    for n in 1..=4 {
        m.entry(k(n), 0, WhenFull::Refuse, || n as u32);
    }
    assert_eq!(m.remove(&k(2)), Some(2));
    assert_eq!(m.remove(&k(4)), Some(4));
    for n in 5..=6 {
        m.entry(k(n), 0, WhenFull::Refuse, || n as u32);
    }
    assert_eq!(m.len(), 4);
    for n in [1, 3, 5, 6] {
        assert_eq!(m.get_mut(&k(n)).copied(), Some(n as u32));
    }
}

#[test]
fn grows_to_the_capacity_and_no_further() {
    let mut m: Lru<u64> = Lru::new(1000);
    assert_eq!(m.slots(), 0, "nothing allocated before the first insert");
    for n in 0..1000u64 {
        let key = crate::HashKey::DEFAULT.digest(&n.to_le_bytes());
        m.entry(key, 0, WhenFull::Refuse, || n)
            .unwrap()
            .set_idle_at(u64::MAX);
    }
    assert_eq!(m.len(), 1000);
    assert_eq!(m.slots(), 1000 + 1000 / 7 + 1);
    for n in 0..1000u64 {
        let key = crate::HashKey::DEFAULT.digest(&n.to_le_bytes());
        assert_eq!(m.peek(&key), Some(&n), "{n}");
    }
    let extra = crate::HashKey::DEFAULT.digest(b"extra");
    assert!(m.entry(extra, 0, WhenFull::Refuse, || 0).is_none());
    assert_eq!(m.slots(), 1000 + 1000 / 7 + 1);
}

#[test]
fn the_idle_time_saturates_instead_of_wrapping() {
    let mut m: Lru<u8> = Lru::new(1);
    m.entry(k(1), 0, WhenFull::Refuse, || 1)
        .unwrap()
        .set_idle_at(u64::MAX);
    assert!(m
        .entry(k(2), IDLE_MAX - 1, WhenFull::Refuse, || 2)
        .is_none());
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u8),
    Remove(u8),
    Get(u8),
}

/// Keys whose probe start is one of 4 values: long runs that collide,
/// wrap around the table's end, and shift back on removal.
fn crowded(n: u8, home: u8) -> KeyDigest {
    let mut b = [0u8; 16];
    b[0] = n;
    b[8..].copy_from_slice(&[[0; 8], [0x55; 8], [0xaa; 8], [0xff; 8]][usize::from(home % 4)]);
    KeyDigest(b)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..40, any::<u8>()).prop_map(|(k, h)| Op::Insert(k, h)),
        (0u8..40).prop_map(Op::Remove),
        (0u8..40).prop_map(Op::Get),
    ]
}

proptest! {
    /// Below its capacity the map is an ordinary map: the same answers as
    /// a `HashMap` after any sequence of inserts, removals and lookups.
    #[test]
    fn below_capacity_it_matches_a_hash_map(ops in prop::collection::vec(op(), 1..300)) {
        let mut m: Lru<u8, CacheLine> = Lru::new(48);
        let mut model: HashMap<u8, u8> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(n, v) => {
                    let e = m.entry(crowded(n, n), 0, WhenFull::Refuse, || v).unwrap();
                    let was = model.insert(n, *e.value);
                    prop_assert_eq!(e.how == Inserted::Found, was.is_some());
                    if was.is_none() {
                        prop_assert_eq!(*e.value, v);
                    }
                }
                Op::Remove(n) => {
                    prop_assert_eq!(m.remove(&crowded(n, n)), model.remove(&n));
                }
                Op::Get(n) => {
                    prop_assert_eq!(m.get_mut(&crowded(n, n)).copied(), model.get(&n).copied());
                }
            }
            prop_assert_eq!(m.len(), model.len());
        }
        for n in 0..40 {
            prop_assert_eq!(m.peek(&crowded(n, n)), model.get(&n));
        }
    }

    /// Full, it never holds more than its capacity, never loses a key it
    /// did not evict, and refuses only when nothing sampled is idle.
    #[test]
    fn full_it_stays_bounded(ops in prop::collection::vec((0u8..64, 0u64..10), 1..300)) {
        let mut m: Lru<u8> = Lru::new(8);
        let mut now = 0;
        for (n, dt) in ops {
            now += dt;
            let before = m.len();
            match m.entry(crowded(n, n / 4), now, WhenFull::Refuse, || n) {
                Some(mut e) => {
                    prop_assert_eq!(*e.value, n);
                    e.set_idle_at(now + 20);
                }
                None => prop_assert_eq!(before, 8),
            }
            prop_assert!(m.len() <= 8);
        }
    }
}

#[test]
fn a_subject_state_slot_is_one_cache_line() {
    use crate::algorithm::SubjectState;
    use std::mem::{align_of, size_of};
    assert_eq!(size_of::<Slot<SubjectState, CacheLine>>(), 64);
    assert_eq!(align_of::<Slot<SubjectState, CacheLine>>(), 64);
    assert_eq!(size_of::<Slot<u64, ()>>(), 40);
}

#[test]
fn a_packed_state_slot_is_half_a_cache_line() {
    use crate::algorithm::Packed;
    use std::mem::{align_of, size_of};
    assert_eq!(size_of::<Slot<Packed, HalfLine>>(), 32);
    assert_eq!(align_of::<Slot<Packed, HalfLine>>(), 32);
}

#[test]
fn a_full_table_refuses_until_its_entry_is_idle() {
    let mut m: Lru<u64> = Lru::new(1);
    let mut e = m
        .entry(KeyDigest([1; 16]), 0, WhenFull::Refuse, || 7)
        .unwrap();
    assert_eq!((*e.value, e.how), (7, Inserted::New));
    e.set_idle_at(100);
    // Full, and the one entry is live until 100: refused.
    assert!(m
        .entry(KeyDigest([2; 16]), 50, WhenFull::Refuse, || 8)
        .is_none());
    // At 100 it is idle and makes room.
    assert!(m
        .entry(KeyDigest([2; 16]), 100, WhenFull::Refuse, || 8)
        .is_some());
}
