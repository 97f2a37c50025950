//! The key stored at `<prefix>hashkey` is the truth and the instances
//! converge on it (issue 27, item 1): after Valkey restarts without
//! persistence, an instance writes its key back, or adopts the one another
//! instance stored meanwhile, so a fleet never splits silently. And a key
//! of the wrong type or form is named with what it should hold (item 4).
#![allow(clippy::print_stderr)] // prints what it measures, for the issue notes

use std::time::{Duration, Instant};

use ratelimit_core::backend::Backend;
use ratelimit_core::rules::{FailMode, RuleBuilder, RuleSet};
use ratelimit_core::{HashKey, Limiter, Outcome, RequestAttrs};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{connect as raw, free_port, server, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

async fn backend(url: &str, prefix: &str) -> ValkeyBackend {
    ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .require_connection(true)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The key stored at `<prefix>hashkey`.
async fn stored(url: &str, prefix: &str) -> Option<HashKey> {
    let mut conn = raw(url).await;
    let hex: Option<String> = redis::cmd("GET")
        .arg(format!("{prefix}hashkey"))
        .query_async(&mut conn)
        .await
        .expect("get");
    let hex = hex?;
    let bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    Some(HashKey::new(bytes.try_into().expect("16 bytes")))
}

/// Waits, at most `within`, until `done` holds; whether it did.
async fn eventually(within: Duration, mut done: impl AsyncFnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if done().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done().await
}

/// Kills the server on `port` and starts an empty one on the same port.
/// One rule keyed on the address, 5 a minute, failing closed (so that a
/// request Valkey does not answer reads as unavailable, not admitted).
fn login() -> RuleSet {
    let rule = RuleBuilder::new("login")
        .key(["ip"])
        .fixed_window(5, Duration::from_secs(60))
        .fail_mode(FailMode::Closed)
        .build()
        .expect("rule");
    RuleSet::from_rules(vec![rule]).expect("rules")
}

/// Whether `limiter` admits a request of a client it never saw within
/// `within` (its connections, broken by a restart, are back).
async fn answers_again(limiter: &Limiter, within: Duration) -> bool {
    let other = RequestAttrs::new("198.51.100.1".parse().expect("ip"));
    eventually(within, async || {
        limiter.check(&other).await.outcome == Outcome::Forward
    })
    .await
}

/// `n` requests of `req` sent to `a` and `b` in turn, each answered by
/// Valkey (admitted or limited, never failed): how many were admitted.
async fn alternating(a: &Limiter, b: &Limiter, req: &RequestAttrs, n: usize) -> usize {
    let mut admitted = 0;
    for i in 0..n {
        let limiter = if i % 2 == 0 { a } else { b };
        let verdict = limiter.check(req).await;
        assert!(
            matches!(verdict.outcome, Outcome::Forward | Outcome::Limited),
            "request {i} answered by Valkey: {:?}",
            verdict.outcome
        );
        admitted += usize::from(verdict.is_forward());
    }
    admitted
}

fn restart(server: &mut ValkeyServer, port: u16) -> ValkeyServer {
    server.kill();
    ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_without_persistence_two_instances_converge_and_count_together() {
    let port = free_port();
    let mut first = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let url = first.url().to_owned();
    let prefix = unique("hr");
    let a = backend(&url, &prefix).await;
    let old = a.hash_key().expect("read at build");

    // Valkey restarts without persistence; B starts and stores a new key.
    let _server = restart(&mut first, port);
    let b = backend(&url, &prefix).await;
    let new = b.hash_key().expect("read at build");
    assert_ne!(new, old, "B stored a fresh key");

    // A checks the stored key periodically and at its reconnection.
    let waited = Instant::now();
    let converged = eventually(Duration::from_secs(15), async || a.hash_key() == Some(new)).await;
    eprintln!("A adopted B's key {:?} after B started", waited.elapsed());
    let on_a = Limiter::builder(login()).backend(a.clone()).build();
    let on_b = Limiter::builder(login()).backend(b).build();
    // A's connections broke with the restart: another client's requests
    // until one is answered (the A had reconnected too).
    let reconnected = answers_again(&on_a, Duration::from_secs(5)).await;
    assert!(reconnected, "A answers again");
    let req = RequestAttrs::new("203.0.113.7".parse().expect("ip"));
    let admitted = alternating(&on_a, &on_b, &req, 12).await;
    assert_eq!(
        admitted, 5,
        "12 alternating requests under a limit of 5 (A converged: {converged})"
    );
    assert!(converged, "A adopted the stored key");
    assert_eq!(stored(&url, &prefix).await, Some(new));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_alone_writes_its_key_back_after_a_restart() {
    let port = free_port();
    let mut first = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let url = first.url().to_owned();
    let prefix = unique("hr");
    let a = backend(&url, &prefix).await;
    let key = a.hash_key().expect("read at build");

    let _server = restart(&mut first, port);
    let waited = Instant::now();
    let back = eventually(Duration::from_secs(15), async || {
        stored(&url, &prefix).await.is_some()
    })
    .await;
    eprintln!(
        "A wrote its key back {:?} after the restart",
        waited.elapsed()
    );
    assert!(back, "A wrote its key back to the empty server");
    assert_eq!(stored(&url, &prefix).await, Some(key));
    assert_eq!(a.hash_key(), Some(key), "A kept its key");
    // An instance started now joins A.
    assert_eq!(backend(&url, &prefix).await.hash_key(), Some(key));
}

/// The error `build` gives with `<prefix>hashkey` set up by `set`.
async fn build_error(set: &mut redis::Cmd, prefix: &str, url: &str) -> String {
    let mut conn = raw(url).await;
    let _: redis::Value = set.query_async(&mut conn).await.expect("set up");
    let e = ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .require_connection(true)
        .build()
        .await
        .expect_err("a bad hash key");
    e.to_string()
}

#[tokio::test]
async fn a_hash_key_of_another_type_or_form_is_named_with_what_it_should_hold() {
    let server = server();
    let prefix = unique("hr");
    let name = format!("{prefix}hashkey");
    let e = build_error(
        redis::cmd("RPUSH").arg(&name).arg("x"),
        &prefix,
        server.url(),
    )
    .await;
    assert!(e.contains(&format!("{name} holds a list")), "{e}");
    assert!(e.contains("a string of 32 hex digits"), "{e}");
    assert!(!e.contains("user_script"), "{e}");

    let prefix = unique("hr");
    let name = format!("{prefix}hashkey");
    let e = build_error(
        redis::cmd("SET").arg(&name).arg("not-a-key"),
        &prefix,
        server.url(),
    )
    .await;
    assert!(
        e.contains(&format!("{name} holds a string that is not 32 hex digits")),
        "{e}"
    );
    assert!(e.contains("a string of 32 hex digits"), "{e}");
}

/// Two instances given the same key explicitly (read once, when their
/// limiters are built: `Backend::hash_key_changes` is false) count one
/// subject together before and after Valkey restarts without persistence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_keys_are_read_once_and_count_together_across_a_restart() {
    let port = free_port();
    let mut first = ValkeyServer::spawn_on(port).unwrap_or_else(|e| panic!("{e}"));
    let url = first.url().to_owned();
    let prefix = unique("hx");
    let key = HashKey::new([7; 16]);
    let explicit = || async {
        let b = ValkeyBackend::builder(&url)
            .key_prefix(&prefix)
            .hash_key(key)
            .require_connection(true)
            .build()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!b.hash_key_changes(), "an explicit key never changes");
        b
    };
    let on_a = Limiter::builder(login()).backend(explicit().await).build();
    let on_b = Limiter::builder(login()).backend(explicit().await).build();
    // Alternating requests of `ip` under a limit of 5: the fleet admits 5.
    let admitted = async |ip: &str, n: usize| {
        let req = RequestAttrs::new(ip.parse().expect("ip"));
        alternating(&on_a, &on_b, &req, n).await
    };
    assert_eq!(admitted("203.0.113.7", 12).await, 5, "before the restart");
    let _server = restart(&mut first, port);
    // Both reconnect (each answers a request of another client again).
    for limiter in [&on_a, &on_b] {
        let back = answers_again(limiter, Duration::from_secs(5)).await;
        assert!(back, "an instance answers again after the restart");
    }
    // A new subject (the first one's refusals are cached in each instance
    // until its window ends): the two instances still share its count.
    assert_eq!(
        admitted("203.0.113.8", 12).await,
        5,
        "after it, the key kept"
    );
    assert_eq!(
        stored(&url, &prefix).await,
        None,
        "an explicit key is never stored"
    );
}
