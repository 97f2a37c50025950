//! The guide's table of what each Valkey user may do with each key
//! (docs/fleet.md, "Who may write the control keys"), cell by cell,
//! against a real server: the users are created from the guide's
//! `ACL SETUSER` lines as written, the keys by the control and the limiter
//! themselves, and every key they make has its row (issue 39, finding 4).

mod control_common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use control_common::guide_acl::{as_user, setuser_lines, table, Row};
use control_common::{api_set, wait_until};
use ratelimit_core::control::Control;
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::{Limiter, RequestAttrs};
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use ratelimit_valkey::control::{FollowConfig, ValkeyControl};
use ratelimit_valkey::ValkeyBackend;
use redis::aio::MultiplexedConnection;

/// Every key a fleet makes, made as each role makes it: the request path's
/// state and hash key, a publish, a switch, a lift, the CSRF secret and an
/// instance's report, a rule added at run time.
async fn make_every_key(url: &str) {
    let backend = ValkeyBackend::builder(as_user(url, "rl-request"))
        .key_prefix("rl:")
        .build()
        .await
        .expect("the request path's backend");
    let limiter = Limiter::builder(RuleSet::from_json(&api_set(2, "block")).unwrap())
        .backend(backend)
        .build();
    let operator = ValkeyControl::open(&as_user(url, "rl-operator"), "rl:")
        .unwrap()
        .with_limiter(limiter.clone());
    operator
        .publish(0, &api_set(2, "block"), "table", BTreeMap::new())
        .await
        .expect("the operator publishes");
    let switch = ratelimit_core::control::Switch::DisableJwt;
    operator.set_switch(switch, false).await.expect("a switch");
    let req = RequestAttrs::new("192.0.2.7".parse().unwrap());
    let subject = limiter.subject_of("api", &req).unwrap();
    operator.lift("api", subject).await.expect("a lift");
    let surge = RuleBuilder::new("surge")
        .expression(r#"http.request.uri.path eq "/""#)
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(limiter.now_ms() + 600_000)
        .build()
        .expect("a valid rule");
    operator
        .add_temporary(surge, "table")
        .await
        .expect("the operator adds a rule at run time");
    assert!(
        limiter.check(&req).await.is_forward(),
        "the request path counts"
    );
    assert_eq!(operator.csrf_secret().await.map(|s| s.len()), Ok(32));
    let follower = ValkeyControl::open(&as_user(url, "rl-follower"), "rl:")
        .unwrap()
        .follow(
            limiter,
            FollowConfig::new("edge-1").poll(Duration::from_millis(50)),
        );
    let mut reported = false;
    wait_until("the follower's report", Duration::from_secs(3), || {
        reported = reported || follower.reads() > 1;
        reported
    })
    .await;
    for _ in 0..200 {
        if operator.fleet().await.is_ok_and(|v| v.instances.len() == 1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(follower);
}

/// Whether the answer says the user may (anything but `NOPERM`; a
/// `WRONGTYPE` was let through the ACL).
fn allowed<T>(what: &str, r: redis::RedisResult<T>) -> bool {
    match r {
        Ok(_) => true,
        Err(e) if e.code() == Some("NOPERM") => false,
        Err(e) if e.code() == Some("WRONGTYPE") => true,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// The read, write and replace commands for a key of type `kind`.
fn probes(key: &str, kind: &str) -> [(&'static str, redis::Cmd); 3] {
    let c = |name: &str| {
        let mut cmd = redis::cmd(name);
        cmd.arg(key);
        cmd
    };
    let (read, write, replace) = match kind {
        "string" => (
            c("GET"),
            c("SET").arg("probe").clone(),
            c("LPUSH").arg("probe").clone(),
        ),
        "hash" => (
            c("HGETALL"),
            c("HSET").arg("probe").arg(1).clone(),
            c("SET").arg("probe").clone(),
        ),
        "list" => (
            c("LRANGE").arg(0).arg(-1).clone(),
            c("LPUSH").arg("probe").clone(),
            c("SET").arg("probe").clone(),
        ),
        "zset" => (
            c("ZRANGEBYSCORE").arg("-inf").arg("+inf").clone(),
            c("ZADD").arg(0).arg("probe").clone(),
            c("SET").arg("probe").clone(),
        ),
        other => panic!("{key} holds a {other}"),
    };
    [("read", read), ("write", write), ("replace", replace)]
}

/// What `user` may do with the key `key` of `row`: each probe run as the
/// user, the key restored after it.
async fn may_on_key(
    url: &str,
    admin: &mut MultiplexedConnection,
    user: &str,
    key: &str,
) -> BTreeSet<String> {
    let kind: String = redis::cmd("TYPE")
        .arg(key)
        .query_async(admin)
        .await
        .unwrap();
    let dump: Vec<u8> = redis::cmd("DUMP")
        .arg(key)
        .query_async(admin)
        .await
        .unwrap();
    let mut conn = connect(&as_user(url, user)).await;
    let mut may = BTreeSet::new();
    for (word, cmd) in probes(key, &kind) {
        if allowed(
            &format!("{user} {word} {key}"),
            cmd.query_async::<redis::Value>(&mut conn).await,
        ) {
            may.insert(word.to_owned());
        }
        let _: () = redis::cmd("RESTORE")
            .arg(key)
            .arg(0)
            .arg(&dump)
            .arg("REPLACE")
            .query_async(admin)
            .await
            .unwrap();
    }
    may
}

/// What `user` may do on the channel `channel`.
async fn may_on_channel(url: &str, user: &str, channel: &str) -> BTreeSet<String> {
    let url = as_user(url, user);
    let mut may = BTreeSet::new();
    let mut pubsub = redis::Client::open(url.as_str())
        .unwrap()
        .get_async_pubsub()
        .await
        .unwrap();
    if allowed(
        &format!("{user} subscribe"),
        pubsub.subscribe(channel).await,
    ) {
        may.insert("subscribe".to_owned());
    }
    let mut conn = connect(&url).await;
    let publish = redis::cmd("PUBLISH")
        .arg(channel)
        .arg("probe")
        .query_async::<u64>(&mut conn)
        .await;
    if allowed(&format!("{user} publish"), publish) {
        may.insert("publish".to_owned());
    }
    may
}

/// The key a row names, among the server's `keys`.
fn key_of<'a>(row: &Row, keys: &'a [String]) -> &'a str {
    let found = keys.iter().find(|k| names(&row.key, k));
    found.unwrap_or_else(|| panic!("no key made for the row {:?} among {keys:?}", row.key))
}

/// Whether the table's `name` (`rl:{…}`, `…:instance:<id>`) names `key`.
fn names(name: &str, key: &str) -> bool {
    match name.split_once(['…', '<']) {
        Some((head, _)) => key.starts_with(head) && key.len() > head.len(),
        None => key == name,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cell_of_the_guides_table_holds_on_a_real_server() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    let mut admin = connect(url).await;
    for words in setuser_lines() {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&words)
            .query_async(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("ACL SETUSER {words:?}: {e}"));
    }
    make_every_key(url).await;
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut admin)
        .await
        .unwrap();
    keys.sort();
    let table = table();
    for key in &keys {
        assert!(
            table.rows.iter().any(|r| !r.channel && names(&r.key, key)),
            "the key {key} has no row in the guide's table"
        );
    }
    let mut wrong = Vec::new();
    for row in &table.rows {
        for (user, said) in table.users.iter().zip(&row.may) {
            let may = if row.channel {
                may_on_channel(url, user, &row.key).await
            } else {
                may_on_key(url, &mut admin, user, key_of(row, &keys)).await
            };
            if &may != said {
                wrong.push(format!(
                    "{user} on {}: the guide says {said:?}, the server {may:?}",
                    row.key
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
