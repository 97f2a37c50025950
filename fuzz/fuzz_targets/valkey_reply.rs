//! The decoder of Valkey script replies on any bytes, then the decision of each algorithm.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::valkey_reply(data));
