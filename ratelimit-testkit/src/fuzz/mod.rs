//! Bodies of the cargo-fuzz targets in `fuzz/`, shared with the corpus
//! replay test (`ratelimit-testkit/tests/fuzz_corpus.rs`) so both run
//! exactly the same code. One file per target.
//!
//! Each function takes the raw bytes of one input, never panics on its own
//! account, and asserts only what the documentation of the code under test
//! promises (round trips, 1-based error columns, positions in nginx errors).
//! A panic is a finding.
//!
//! | target | body |
//! | --- | --- |
//! | `rules_json` | [`rules_json`] (inputs shaped by [`rules_value`]) |
//! | `expression` | [`expression`] |
//! | `nginx_config` | [`nginx_config`] |
//! | `request_keys` | [`request_keys`] (requests read by [`request_from_bytes`]) |
//! | `valkey_reply` | [`valkey_reply`] |
//! | `access_log` | [`access_log`] |

mod access_log;
mod expression;
mod input;
mod limiter;
mod nginx_config;
mod request;
mod request_keys;
mod rules_json;
mod rules_value;
mod valkey_reply;

pub use access_log::access_log;
pub use expression::expression;
pub use nginx_config::{nginx_config, MAX_LOADED_ZONE_BYTES};
pub use request::request_from_bytes;
pub use request_keys::request_keys;
pub use rules_json::rules_json;
pub use rules_value::rules_value;
pub use valkey_reply::reply as valkey_reply;

/// The time every target starts at: 2026-01-01T00:00:00Z, in Unix ms.
pub const T0_MS: u64 = 1_767_225_600_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_inputs_run() {
        rules_json(b"");
        expression(b"");
        nginx_config(b"");
        request_keys(b"");
        valkey_reply(b"");
    }
}
