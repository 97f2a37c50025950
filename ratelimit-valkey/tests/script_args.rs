//! The scripts' arguments as sent by hand: a check's head (the algorithm's
//! digit alone for a count of cost 1 without a penalty, else its mode's
//! digit, a penalty and `x` and a cost), the time after the checks only
//! when injected, and the error line of each malformed call.

use ratelimit_core::algorithm::Algorithm;
use ratelimit_testkit::checks::T0;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect, exists, load_script, server};
use ratelimit_valkey::{batch_script_source, script_source};
use redis::aio::MultiplexedConnection;

/// The injected expiry offset the backend sends (2^42 ms).
const OFFSET: u64 = 1 << 42;

/// `EVALSHA sha <keys> <args>`: the reply or the error's text.
async fn eval(
    conn: &mut MultiplexedConnection,
    sha: &str,
    keys: &[&str],
    args: &[&str],
) -> Result<String, String> {
    redis::cmd("EVALSHA")
        .arg(sha)
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .query_async(conn)
        .await
        .map_err(|e| e.to_string())
}

/// A sliding window of 10 per minute: heads with a cost, a probe and a
/// penalty decide as their mode says, on one key.
#[tokio::test]
async fn a_head_carries_the_mode_penalty_and_cost() {
    let server = server();
    let mut conn = connect(server.url()).await;
    let sha = load_script(
        &mut conn,
        script_source(Algorithm::SlidingWindow).expect("a script"),
    )
    .await;
    let key = unique("head");
    let (t, off) = (T0.to_string(), OFFSET.to_string());
    let run = |head: &'static str| {
        let (sha, key, t, off) = (sha.clone(), key.clone(), t.clone(), off.clone());
        let mut conn = conn.clone();
        async move { eval(&mut conn, &sha, &[&key], &[head, "10", "60000", &t, &off]).await }
    };
    // A count of cost 1, then of cost 4: remaining 9, then 5.
    assert_eq!(run("2").await.as_deref(), Ok("1 0 9 120000 0"));
    assert_eq!(run("20x4").await.as_deref(), Ok("1 0 5 120000 0"));
    // A probe of cost 6 writes nothing: refused (5 left), then a count of
    // cost 5 fits.
    assert!(run("21x6").await.expect("probe").starts_with("0 "));
    assert_eq!(run("20x5").await.as_deref(), Ok("1 0 0 120000 0"));
    // Refused with a 30 s penalty (status 3), then blocked (status 2).
    let until = T0 + 30_000;
    assert_eq!(run("2030000").await, Ok(format!("3 30000 0 30000 {until}")));
    assert_eq!(run("2").await, Ok(format!("2 30000 0 30000 {until}")));
    // A charge of cost 2 with no penalty on another key: counted past
    // nothing, 8 left.
    let other = unique("charge");
    let reply = eval(&mut conn, &sha, &[&other], &["22x2", "10", "60000"]).await;
    assert!(reply.expect("charge").starts_with("1 0 8 "));
}

/// A single check's script: the wrong count of arguments, another
/// algorithm's head, a mode it does not know and a time that is not a
/// number each get their error line, and write nothing.
#[tokio::test]
async fn a_malformed_single_call_gets_its_error() {
    let server = server();
    let mut conn = connect(server.url()).await;
    let sha = load_script(
        &mut conn,
        script_source(Algorithm::TokenBucket).expect("a script"),
    )
    .await;
    let key = unique("bad");
    let t = T0.to_string();
    let cases: [(&[&str], &str); 6] = [
        (
            &["3", "10", "600000"],
            "expected 1 key, a head and 3 parameters",
        ),
        (&["3", "10", "600000", "60000", &t], "expected 1 key"),
        (&["2", "10", "600000", "60000"], "bad mode, penalty or cost"),
        (
            &["37", "10", "600000", "60000"],
            "bad mode, penalty or cost",
        ),
        (
            &["30x", "10", "600000", "60000", "x", "0"],
            "bad time argument",
        ),
        (
            &["3", "10", "600000", "60000", &t, "y"],
            "bad time argument",
        ),
    ];
    for (args, want) in cases {
        let e = eval(&mut conn, &sha, &[&key], args)
            .await
            .expect_err("refused");
        assert!(e.contains(want), "{args:?}: {e}");
    }
    assert!(!exists(&mut conn, &key).await);
}

/// The batch script: heads of every form in one call, with Valkey time (no
/// time after the checks) and with injected time; a time of one argument
/// only is the wrong count, an unknown algorithm's digit its own error.
#[tokio::test]
async fn a_batch_takes_each_head_and_the_time_after_the_checks() {
    let server = server();
    let mut conn = connect(server.url()).await;
    let sha = load_script(&mut conn, batch_script_source()).await;
    let (a, b, c) = (unique("a"), unique("b"), unique("c"));
    let keys = [a.as_str(), b.as_str(), c.as_str()];
    // A sliding window count, a token bucket charge of cost 2 with a
    // penalty and a fixed window probe.
    let checks = [
        "2",
        "10",
        "60000",
        "3260000x2",
        "10",
        "600000",
        "60000",
        "11",
        "10",
        "60000",
    ];
    let reply = eval(&mut conn, &sha, &keys, &checks).await.expect("batch");
    let lines: Vec<&str> = reply.lines().collect();
    assert_eq!(lines.len(), 3, "{reply}");
    assert!(lines[0].starts_with("1 0 9 "), "{reply}");
    assert!(lines[1].starts_with("1 0 8 "), "{reply}");
    // The probe counts nothing: it answers the 10 it found.
    assert!(lines[2].starts_with("1 0 10 "), "{reply}");
    let (t, off) = (T0.to_string(), OFFSET.to_string());
    let mut injected = checks.to_vec();
    injected.extend([t.as_str(), off.as_str()]);
    let keys2 = [a.as_str(), b.as_str(), &unique("d")];
    let reply = eval(&mut conn, &sha, &keys2, &injected)
        .await
        .expect("batch");
    assert_eq!(
        reply, "1 0 9 120000 0\n1 0 8 12000 0\n1 0 10 60000 0",
        "past keys are stale at T0, the probe's key is new"
    );
    injected.pop();
    let e = eval(&mut conn, &sha, &keys, &injected)
        .await
        .expect_err("refused");
    assert!(e.contains("wrong number of arguments for the keys"), "{e}");
    // An algorithm's digit the scripts do not know, alone or with a mode.
    for head in ["9", "90x2", ""] {
        let e = eval(&mut conn, &sha, &[&a], &[head, "10", "60000"])
            .await
            .expect_err("refused");
        assert!(e.contains("bad algorithm argument"), "{head}: {e}");
    }
}
