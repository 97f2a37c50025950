//! Cross-crate integration tests, against a real valkey-server where they need one.
#![forbid(unsafe_code)]
