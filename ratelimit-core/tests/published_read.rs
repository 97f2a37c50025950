//! Each thread keeps the rule set it read last (no lock per request): a
//! publish, a rule added or removed at run time must still decide the
//! very next request, on the thread that published and on any other, and
//! a snapshot keeps the set it was taken with.

mod support;

use std::sync::mpsc;
use std::time::Duration;

use ratelimit_core::rules::RuleBuilder;
use ratelimit_core::{Limiter, ManualClock, Outcome};
use support::{req, rules, T0};

/// One rule `id` limiting every address to `limit` requests a minute.
fn per_ip(id: &str, limit: u32) -> String {
    format!(
        r#"[{{"id": "{id}", "expression": "true", "algorithm": "fixed_window",
             "limit": {limit}, "period": "1m", "key": ["ip"]}}]"#
    )
}

fn limiter(json: &str) -> Limiter {
    Limiter::builder(rules(json))
        .clock(ManualClock::new(T0))
        .build()
}

fn outcome(l: &Limiter, ip: &str) -> Outcome {
    l.check(&req(ip, "/")).into_ready().expect("ready").outcome
}

#[test]
fn a_publish_decides_the_next_request_on_another_thread() {
    let l = limiter(&per_ip("a", 1));
    let (go, wait) = mpsc::channel::<()>();
    let (done, seen) = mpsc::channel::<Vec<Outcome>>();
    let other = {
        let l = l.clone();
        std::thread::spawn(move || {
            // Two requests: this thread now holds its copy of the set.
            done.send(vec![outcome(&l, "192.0.2.1"), outcome(&l, "192.0.2.1")])
                .expect("send");
            wait.recv().expect("go");
            done.send(vec![outcome(&l, "192.0.2.2"), outcome(&l, "192.0.2.2")])
                .expect("send");
        })
    };
    use Outcome::{Forward, Limited};
    assert_eq!(seen.recv().expect("first"), [Forward, Limited]);
    // Another rule id: its subjects start fresh, with a limit of 2.
    l.publish(rules(&per_ip("b", 2)));
    go.send(()).expect("go");
    assert_eq!(seen.recv().expect("second"), [Forward, Forward]);
    other.join().expect("thread");
}

#[test]
fn a_snapshot_keeps_its_set_and_the_next_one_reads_the_publish() {
    let l = limiter(&per_ip("a", 1));
    assert_eq!(outcome(&l, "192.0.2.1"), Outcome::Forward);
    let before = l.snapshot();
    l.publish(rules(&per_ip("b", 5)));
    let r = req("192.0.2.1", "/");
    let old = before.check(&r).into_ready().expect("ready");
    assert_eq!(old.outcome, Outcome::Limited, "decided under rule a");
    drop(before);
    let new = l.snapshot().check(&r).into_ready().expect("ready");
    assert_eq!(new.outcome, Outcome::Forward, "decided under rule b");
    assert_eq!(l.rules().rules()[0].id, "b");
}

#[test]
fn rules_added_and_removed_at_run_time_apply_to_the_next_request() {
    let l = limiter(&per_ip("a", 100));
    for _ in 0..3 {
        assert_eq!(outcome(&l, "192.0.2.1"), Outcome::Forward);
    }
    let block = RuleBuilder::new("block")
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(T0 + 60_000)
        .build()
        .expect("rule");
    l.add_temporary(block).expect("added");
    assert_eq!(outcome(&l, "192.0.2.1"), Outcome::Forward);
    assert_eq!(outcome(&l, "192.0.2.1"), Outcome::Limited);
    assert!(l.remove_temporary("block"));
    assert_eq!(outcome(&l, "192.0.2.1"), Outcome::Forward);
}
