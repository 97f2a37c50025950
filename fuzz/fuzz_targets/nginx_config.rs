//! `NginxConfig::parse` and `Level::parse` on arbitrary UTF-8; small configurations are loaded and checked.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ratelimit_testkit::fuzz::nginx_config(data));
