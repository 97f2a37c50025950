//! `Expression::parse` on the text before the first NUL; `matches` on a request read from the rest.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::expression(data));
