//! The scripts' exact integer helpers, run in Valkey's Lua against u128:
//! `muldiv(a, b, d)` is `floor(a * b / d)` and its remainder for every
//! `a < 2^53`, `b, d < 2^31` with a quotient below 2^53, also where `a * b`
//! passes 2^53 and a plain Lua product would round.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ratelimit_testkit::valkey::{connect as raw, server};

const PRELUDE: &str = include_str!("../src/scripts/prelude.lua");
const HELPERS: &str = include_str!("../src/scripts/helpers.lua");

fn muldiv_case() -> impl Strategy<Value = (u64, u64, u64)> {
    let a = prop_oneof![0u64..1 << 53, (1u64 << 52)..1 << 53, 0u64..1 << 31];
    let b = prop_oneof![0u64..(1 << 31) - 1, (1u64 << 30)..(1 << 31) - 1];
    (a, b, 1u64..1 << 31).prop_map(|(a, b, d)| {
        // Keep the quotient below 2^53: d > a * b / 2^53.
        let min_d = ((u128::from(a) * u128::from(b)) >> 53) as u64 + 1;
        (a, b, d.max(min_d))
    })
}

#[test]
fn muldiv_in_lua_is_exact() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = server();
    let con = rt.block_on(raw(server.url()));
    let src = format!(
        "{PRELUDE}{HELPERS}local q, r = muldiv(tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))\n\
         return string.format('%d %d', q, r)"
    );
    let script = redis::Script::new(&src);
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(512),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&muldiv_case(), |(a, b, d)| {
        let got: String = rt
            .block_on(
                script
                    .key("lua-arith")
                    .arg(1)
                    .arg(0)
                    .arg(0)
                    .arg(0)
                    .arg(a)
                    .arg(b)
                    .arg(d)
                    .invoke_async(&mut con.clone()),
            )
            .map_err(|e| TestCaseError::fail(format!("script: {e}")))?;
        let p = u128::from(a) * u128::from(b);
        let want = format!("{} {}", p / u128::from(d), p % u128::from(d));
        prop_assert_eq!(got, want, "muldiv({}, {}, {})", a, b, d);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
