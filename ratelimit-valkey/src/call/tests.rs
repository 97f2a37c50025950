//! The Valkey calls: which script a batch calls, its arguments, slot
//! grouping and the split of a batch reply.

use super::*;
use crate::scripts::{Arg, Head};

fn inv(script: usize, key: &str) -> Invocation {
    Invocation {
        key: key.into(),
        now: None,
        head: Head {
            algorithm: script as u8 + 1,
            mode: 0,
            penalty: 0,
            cost: 1,
        },
        args: vec![Arg::U(10), Arg::U(60_000)],
    }
}

fn words(cmd: &Cmd) -> Vec<String> {
    cmd.args_iter()
        .map(|a| match a {
            redis::Arg::Simple(b) => String::from_utf8_lossy(b).into_owned(),
            _ => "not simple".into(),
        })
        .collect()
}

#[test]
fn one_check_calls_its_algorithms_script() {
    let call = one_call(vec![(0, inv(1, "rl:{a}x"))]).expect("a call");
    assert_eq!(call.script(), 1);
    let w = words(&call.evalsha());
    let sha = script(1).get_hash();
    assert_eq!(w, ["EVALSHA", sha, "1", "rl:{a}x", "2", "10", "60000"]);
}

#[test]
fn a_bucket_limit_goes_as_its_ten_digits() {
    let mut one = inv(2, "rl:{a}x");
    one.args = vec![
        Arg::Digits10(10),
        Arg::U(5_000),
        Arg::Digits10(9_999_999_999),
        Arg::Digits10(0),
    ];
    let w = words(&one_call(vec![(0, one)]).expect("a call").evalsha());
    let want = ["0000000010", "5000", "9999999999", "0000000000"];
    assert_eq!(w[5..], want);
}

#[test]
fn injected_time_sends_the_offset_and_a_penalty_its_head() {
    let mut one = inv(2, "rl:{a}x");
    one.now = Some(1_767_225_600_000);
    one.head.penalty = 30_000;
    one.head.cost = 4;
    let call = one_call(vec![(0, one)]).expect("a call");
    let w = words(&call.evalsha());
    let offset = crate::scripts::INJECTED_EXPIRY_OFFSET_MS.to_string();
    assert_eq!(
        w[2..],
        [
            "1",
            "rl:{a}x",
            "3030000x4",
            "10",
            "60000",
            "1767225600000",
            &offset,
        ]
    );
}

#[test]
fn several_checks_call_the_batch_script() {
    let call = one_call(vec![(0, inv(1, "rl:{a}x")), (3, inv(2, "rl:{b}y"))]).expect("call");
    assert_eq!(call.script(), BATCH);
    assert_eq!(call.idx, [0, 3]);
    let w = words(&call.evalsha());
    assert_eq!(w[1], script(BATCH).get_hash());
    let tail = [
        "2", "rl:{a}x", "rl:{b}y", "2", "10", "60000", "3", "10", "60000",
    ];
    assert_eq!(w[2..], tail);
    assert!(one_call(Vec::new()).is_none());
}

#[test]
fn calls_group_checks_by_slot() {
    let calls = by_slot(vec![
        (0, inv(1, "rl:{a}x")),
        (1, inv(2, "rl:{b}x")),
        (2, inv(0, "rl:{a}y")),
    ]);
    let idx: Vec<_> = calls.iter().map(|c| c.idx.clone()).collect();
    assert_eq!(idx, [vec![0, 2], vec![1]]);
}

#[test]
fn a_batch_reply_splits_per_check() {
    let call = one_call(vec![(0, inv(1, "rl:{a}x")), (1, inv(1, "rl:{a}y"))]).expect("call");
    let text = |s: &str| Value::BulkString(s.as_bytes().to_vec());
    let items = call.replies(text("1 0 3 4 0\n-WRONGTYPE Operation against a key"));
    assert_eq!(items[0], text("1 0 3 4 0"));
    let Value::ServerError(e) = &items[1] else {
        panic!("{items:?}");
    };
    assert_eq!(
        (e.code(), e.details()),
        ("WRONGTYPE", Some("Operation against a key"))
    );
    // The whole call refused (it did not run): each check's reply.
    let moved = redis::parse_redis_value(b"-MOVED 1 127.0.0.1:7001\r\n").expect("resp");
    assert_eq!(call.replies(moved.clone()), [moved.clone(), moved]);
    // A wrong count: an error for each, never a misplaced decision.
    for bad in [
        text("1 0 3 4 0"),
        text("1 0 3 4 0\n\n1 0 3 4 0"),
        text("-\r\n\n-"),
    ] {
        let out = call.replies(bad);
        assert_eq!(out.len(), 2);
        assert!(out
            .iter()
            .all(|v| !matches!(v, Value::BulkString(b) if b.starts_with(b"1"))));
    }
}
