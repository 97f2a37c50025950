//! Script paths the random tests (`differential.rs`) rarely or never
//! reach, each run here on purpose: an error in a Lua path shows only when
//! the path runs.
//!
//! - A sliding window count refused on the fast path whose Retry-After
//!   needs a product past 2^53: the common path (`sliding_window.lua`)
//!   leaves it to the rest of the check (`muldiv`'s limbs).

use std::time::Duration;

use ratelimit_core::backend::CheckMode;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::RuleBuilder;
use ratelimit_testkit::checks::{check_of, one, template, T0};
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{injected, server};

/// Limit 10^9 per day, a previous window full: just after the next window
/// starts, a count of 1 is admitted (the key now holds this window) and a
/// count of 100,000 is refused on the fast path, where the retry's
/// first_fit(limit - cost - cur, prev) multiplies about 10^9 by the period
/// (8.64 * 10^16, past 2^53). Every decision is the core's.
#[tokio::test]
async fn a_fast_path_refusal_past_2_53_is_the_cores() {
    let server = server();
    let backend = injected(server.url()).await;
    let memory = MemoryBackend::with_capacity(16);
    let t = template().await;
    let day = Duration::from_secs(86_400);
    let rule = RuleBuilder::new(unique("sw53"))
        .key(["ip"])
        .sliding_window(1_000_000_000, day)
        .build()
        .expect("rule");
    let period = 86_400_000;
    let window = T0 - T0 % period + period;
    let steps = [
        (window, 1_000_000_000),
        (window + period + 1_000, 1),
        (window + period + 1_000, 100_000),
    ];
    for (i, &(now, cost)) in steps.iter().enumerate() {
        let check = check_of(&t, &rule, "203.0.113.7", cost, None).with_mode(CheckMode::Count);
        let v = one(&backend, &check, now).await.expect("valkey");
        let m = one(&memory, &check, now).await.expect("memory");
        assert_eq!(v, m, "step {i}");
        assert_eq!(v.allowed, i < 2, "step {i}");
    }
}
