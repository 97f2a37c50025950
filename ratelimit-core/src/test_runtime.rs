//! What the crate's unit tests share: awaiting a future on a fresh
//! current-thread runtime (the in-memory backend answers at once, but
//! `VerdictFuture`, charges and control calls are futures).

/// Runs `f` to completion on a new current-thread runtime.
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}
