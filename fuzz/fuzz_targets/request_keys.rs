//! A request from raw parts, keyed under rules covering every key part, missing-key mode and distinct source.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::request_keys(data));
