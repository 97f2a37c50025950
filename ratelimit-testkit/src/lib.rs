//! Test support for the ratelimit workspace. Not published.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod checks;
pub mod fuzz;
pub mod scenarios;
pub mod valkey;

use std::sync::atomic::{AtomicU64, Ordering};

/// A name no other call in this process returns (rule ids, key prefixes):
/// `tag`, the process id, `x` and a counter.
pub fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{tag}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}
