//! The access-log parser of `ratelimit replay` (combined or JSON lines, by the first byte), then the replay.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::access_log(data));
