//! What a token bucket's key may hold besides its own value (see the
//! storage in `token_bucket.lua`), each read as the script says and
//! written back in the current form: the former storage (the units spent
//! alone, read under the current limit) and values of other content
//! (a full bucket). The decisions are the core's for the same history.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{Backend, Batch, Check, MemoryBackend};
use ratelimit_core::rules::{Rule, RuleBuilder};
use ratelimit_core::HashKey;
use ratelimit_testkit::checks::T0;
use ratelimit_testkit::valkey::{connect, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

/// What injected time adds to every expiry it writes (`prelude.lua`).
const OFFSET: u64 = 1 << 42;

/// 10 tokens a second, a burst of 5: a token is 1,000 units, the bucket
/// refills 10 units a ms and holds 5,000.
fn rule() -> Arc<Rule> {
    let rule = RuleBuilder::new("stored")
        .key(["ip"])
        .token_bucket(10, Duration::from_secs(1), 5)
        .build()
        .expect("rule");
    Arc::new(rule)
}

fn batch(rule: &Arc<Rule>, at: u64) -> Batch {
    let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
    let ns = Check::namespace_of(rule).into();
    let check = Check::new(rule.clone(), ns, subject, rule.quota(1), None, None);
    Batch::new(at, vec![check])
}

async fn decide(backend: &impl Backend, rule: &Arc<Rule>, at: u64) -> Decision {
    let mut answers = backend.check(&batch(rule, at)).await;
    answers.remove(0).expect("answered")
}

/// Sets the bucket's key to `value`, expiring at `exp` in script time,
/// runs one count at T0 and gives its decision, then the key's value and
/// expiry (script time) after it.
async fn count_over(value: &str, exp: u64) -> (Decision, String, u64) {
    let server = ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"));
    let valkey = ValkeyBackend::builder(server.url())
        .key_prefix(format!("stored{}:", std::process::id()))
        .injected_time(true)
        .build()
        .await
        .expect("backend");
    let rule = rule();
    let key = valkey.key_of(&batch(&rule, T0).checks[0]);
    let mut conn = connect(server.url()).await;
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(value)
        .arg("PXAT")
        .arg(exp + OFFSET)
        .query_async(&mut conn)
        .await
        .expect("set");
    let decision = decide(&valkey, &rule, T0).await;
    let after: String = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("get");
    let expiry: u64 = redis::cmd("PEXPIRETIME")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("pexpiretime");
    (decision, after, expiry - OFFSET)
}

/// The core's decision for the count after `before` counts, all at T0.
async fn core_after(before: usize) -> Decision {
    let (memory, rule) = (MemoryBackend::with_capacity(4), rule());
    for _ in 0..before {
        decide(&memory, &rule, T0).await;
    }
    decide(&memory, &rule, T0).await
}

#[tokio::test]
async fn the_former_storage_reads_as_units_spent_under_the_current_limit() {
    // 3,000 units spent (3 tokens), full again 300 ms on: the key as the
    // bucket wrote it before its value carried the limit.
    let (decision, after, expiry) = count_over("3000", T0 + 300).await;
    assert_eq!(decision, core_after(3).await);
    assert_eq!(decision.remaining, 1);
    // Written back as -(spent * 10^10 + limit): 4,000 units at 10 a ms,
    // full again 400 ms on.
    assert_eq!((after.as_str(), expiry), ("-40000000000010", T0 + 400));
}

#[tokio::test]
async fn the_current_storage_reads_its_spent_and_limit_parts() {
    let (decision, after, expiry) = count_over("-30000000000010", T0 + 300).await;
    assert_eq!(decision, core_after(3).await);
    assert_eq!((after.as_str(), expiry), ("-40000000000010", T0 + 400));
}

#[tokio::test]
async fn other_content_reads_as_a_full_bucket_and_is_written_afresh() {
    let fresh = core_after(0).await;
    for value in [
        "not a number",
        // A spent part of 0, then one that is not a number.
        "-00000000000010",
        "-3x000000000010",
        // A limit part that is not a number, then one of 0.
        "-300000000000x0",
        "-30000000000000",
        // Too short for the current form, and negative.
        "-5",
    ] {
        let (decision, after, expiry) = count_over(value, T0 + 10_000).await;
        assert_eq!(decision, fresh, "{value}");
        // One token spent, full again 100 ms on (not at the old expiry).
        let now = (after.as_str(), expiry);
        assert_eq!(now, ("-10000000000010", T0 + 100), "{value}");
    }
}
