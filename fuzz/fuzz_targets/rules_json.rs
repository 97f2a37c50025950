//! `RuleSet::from_json_at` on arbitrary UTF-8, both JSON shapes; accessors and a limiter check on success.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::rules_json(data));
