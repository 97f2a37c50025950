//! Runnable examples: quickstart, axum API, hyper server, nginx-style limits;
//! and what several of them share ([`backend_from_env`]).
#![forbid(unsafe_code)]

/// The README's code, compiled as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_valkey::ValkeyBackend;

/// Where the examples keep shared state: the Valkey backend when
/// `VALKEY_URL` is set (every process running an example against that
/// server shares its counts), else the in-memory one (this process only).
/// Says which on stdout.
#[allow(clippy::print_stdout)] // an example says where its state lives
pub async fn backend_from_env() -> Result<Arc<dyn Backend>, Box<dyn std::error::Error>> {
    match std::env::var("VALKEY_URL") {
        Ok(url) => {
            let backend = ValkeyBackend::builder(url.as_str()).build().await?;
            println!("backend: Valkey at {url}");
            Ok(Arc::new(backend))
        }
        Err(_) => {
            println!("backend: in memory (set VALKEY_URL to share counts through Valkey)");
            Ok(Arc::new(MemoryBackend::default()))
        }
    }
}
