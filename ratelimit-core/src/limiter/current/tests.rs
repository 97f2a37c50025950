use super::*;
use crate::rules::RuleSet;

fn set(id: &str) -> Published {
    let json = format!(
        r#"[{{"id": "{id}", "expression": "true", "algorithm": "fixed_window",
            "limit": 1, "period": "1m", "key": ["ip"]}}]"#
    );
    Published::new(RuleSet::from_json(&json).unwrap(), Vec::new(), None)
}

fn id_of(p: &Published) -> String {
    p.set.rules()[0].id.clone()
}

#[test]
fn a_publish_is_read_by_the_next_pin_on_a_thread_that_kept_a_copy() {
    let current = Current::new(set("a"));
    for _ in 0..3 {
        assert_eq!(id_of(&current.pin()), "a");
    }
    current.write().replace(set("b"));
    assert_eq!(id_of(&current.pin()), "b");
    assert_eq!(id_of(&current.load()), "b");
}

#[test]
fn a_publish_is_read_by_the_next_call_with_on_a_thread_that_kept_a_copy() {
    let current = Current::new(set("a"));
    for _ in 0..3 {
        assert_eq!(current.with(id_of), "a");
    }
    current.write().replace(set("b"));
    assert_eq!(current.with(id_of), "b");
    // Nested: the inner call finds no copy and reads under the lock.
    let both = current.with(|outer| (id_of(outer), current.with(id_of)));
    assert_eq!(both, ("b".to_owned(), "b".to_owned()));
}

#[test]
fn a_copy_is_reused_while_nothing_is_published() {
    let current = Current::new(set("a"));
    let first = Arc::as_ptr(&current.load());
    drop(current.pin());
    let pinned = current.pin();
    assert!(std::ptr::eq(&*pinned, first));
    // The lock's own reference, the thread's copy in use: no other.
    assert_eq!(Arc::strong_count(&current.load()), 3);
    drop(pinned);
    assert!(current.with(|p| std::ptr::eq(p, first)));
}

#[test]
fn another_thread_reads_a_publish_made_after_its_copy() {
    let current = Arc::new(Current::new(set("a")));
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (done, seen) = std::sync::mpsc::channel::<String>();
    let other = {
        let current = current.clone();
        std::thread::spawn(move || {
            done.send(id_of(&current.pin())).unwrap();
            wait.recv().unwrap();
            done.send(id_of(&current.pin())).unwrap();
        })
    };
    assert_eq!(seen.recv().unwrap(), "a");
    current.write().replace(set("b"));
    go.send(()).unwrap();
    assert_eq!(seen.recv().unwrap(), "b");
    other.join().unwrap();
}

#[test]
fn limiters_on_one_thread_each_read_their_own_set() {
    let (a, b) = (Current::new(set("a")), Current::new(set("b")));
    for _ in 0..3 {
        assert_eq!(id_of(&a.pin()), "a");
        assert_eq!(id_of(&b.pin()), "b");
    }
    // Nested: the inner pin finds no copy and reads under the lock.
    let outer = a.pin();
    assert_eq!(id_of(&a.pin()), "a");
    assert_eq!(id_of(&outer), "a");
}

#[test]
fn two_pins_at_once_leave_one_copy_in_the_thread_and_free_the_other() {
    let current = Current::new(set("a"));
    let (outer, inner) = (current.pin(), current.pin());
    // The lock's own reference, two copies in use, this count's.
    assert_eq!(Arc::strong_count(&current.load()), 4);
    drop(inner);
    // The outer pin's copy goes back to the slot: the inner one is freed.
    drop(outer);
    assert_eq!(Arc::strong_count(&current.load()), 3);
    assert_eq!(id_of(&current.pin()), "a");
}
