//! The decoder of Valkey script replies on any bytes, held to what a decoded reply must
//! satisfy; then the core's decisions for a rule and timeline read from the bytes, which
//! must survive the reply format.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::valkey_reply(data));
