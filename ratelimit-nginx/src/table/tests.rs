//! The bounded state table: full means refused, slots reused, LRU order.

use super::*;
use ratelimit_core::HashKey;

fn d(n: u32) -> KeyDigest {
    HashKey::DEFAULT.digest(&n.to_le_bytes())
}

fn lru_order(t: &Table<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = t.oldest();
    while i != NIL {
        out.extend(t.get(i).copied());
        i = t.newer(i);
    }
    out
}

#[test]
fn a_full_table_refuses_inserts_and_never_grows() {
    let mut t = Table::with_capacity(3).expect("reserve");
    let bytes = t.memory_bytes();
    for n in 0..3 {
        assert!(t.insert(d(n), n).is_some());
    }
    assert_eq!(t.insert(d(3), 3), None);
    assert_eq!(t.len(), 3);
    assert_eq!(t.memory_bytes(), bytes);
}

#[test]
fn removed_slots_are_reused_and_lookups_follow_chains() {
    let mut t = Table::with_capacity(64).expect("reserve");
    let slots: Vec<u32> = (0..64).filter_map(|n| t.insert(d(n), n)).collect();
    assert_eq!(slots.len(), 64);
    for n in (0..64).step_by(2) {
        let i = t.find(&d(n)).expect("present");
        t.remove(i);
    }
    for n in 0..64 {
        assert_eq!(t.find(&d(n)).is_some(), n % 2 == 1, "{n}");
    }
    for n in 100..132 {
        assert!(t.insert(d(n), n).is_some());
    }
    assert_eq!(t.insert(d(200), 200), None);
    for n in (1..64).step_by(2).chain(100..132) {
        let i = t.find(&d(n)).expect("present");
        assert_eq!(t.get(i), Some(&n));
    }
}

#[test]
fn touch_moves_a_state_to_the_recent_end() {
    let mut t = Table::with_capacity(4).expect("reserve");
    for n in 0..4 {
        t.insert(d(n), n);
    }
    assert_eq!(lru_order(&t), [0, 1, 2, 3]);
    t.touch(t.find(&d(0)).expect("present"));
    t.touch(t.find(&d(2)).expect("present"));
    assert_eq!(lru_order(&t), [1, 3, 0, 2]);
    t.remove(t.find(&d(3)).expect("present"));
    assert_eq!(lru_order(&t), [1, 0, 2]);
    t.remove(t.find(&d(1)).expect("present"));
    t.remove(t.find(&d(2)).expect("present"));
    assert_eq!(lru_order(&t), [0]);
    t.remove(t.find(&d(0)).expect("present"));
    assert_eq!(t.oldest(), NIL);
    assert_eq!(t.len(), 0);
}

#[test]
fn a_freed_slot_is_not_readable_and_removing_it_again_does_nothing() {
    let mut t = Table::with_capacity(2).expect("reserve");
    let i = t.insert(d(1), 1).expect("room");
    t.insert(d(2), 2);
    t.remove(i);
    assert_eq!((t.get(i), t.digest(i)), (None, None));
    t.remove(i);
    assert_eq!(t.len(), 1);
    assert!(t.insert(d(3), 3).is_some());
    assert_eq!(t.insert(d(4), 4), None);
}
