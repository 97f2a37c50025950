//! The fleet-wide Valkey backend for `ratelimit-core`: Lua scripts, one round trip per request.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
