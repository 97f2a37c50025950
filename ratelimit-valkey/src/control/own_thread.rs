//! A follower runs on a thread of its own, with a single-threaded tokio
//! runtime and a connection of its own: its work (a flood of notices to
//! receive, the reads and the reports) never waits in the queues of the
//! threads that serve requests, nor they in its.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::ValkeyControl;

/// One of a follower's tasks.
pub(crate) type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The follower's tasks, running until it is dropped.
#[derive(Debug)]
pub(crate) enum Running {
    /// On a thread of its own; stops when the sender is dropped.
    Thread(#[allow(dead_code)] oneshot::Sender<()>),
    /// On the caller's runtime, when no thread could be started.
    Tasks(Vec<tokio::task::JoinHandle<()>>),
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Running::Tasks(tasks) = self {
            for t in tasks.iter() {
                t.abort();
            }
        }
    }
}

impl ValkeyControl {
    /// This control with a connection of its own (made on first use, on
    /// the runtime that uses it).
    pub(crate) fn with_own_connection(&self) -> Self {
        Self {
            conn: Arc::new(self.conn.fresh()),
            ..self.clone()
        }
    }
}

/// Runs `tasks` on a thread named `name` with a runtime of its own; on
/// the caller's runtime (with an error logged) when the operating system
/// refuses a thread. The thread logs to the caller's `tracing`
/// subscriber, a scoped one included, as the tasks would on the caller's
/// runtime.
pub(crate) fn run_apart(name: String, tasks: Vec<Task>) -> Running {
    let (stop, stopped) = oneshot::channel::<()>();
    let slot = Arc::new(Mutex::new(Some(tasks)));
    let theirs = slot.clone();
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        let _logs = tracing::dispatcher::set_default(&dispatch);
        let tasks = theirs.lock().unwrap_or_else(|p| p.into_inner()).take();
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                tracing::error!(error = %e, "control: the follower's runtime could not be built; not following");
                return;
            }
        };
        runtime.block_on(async move {
            for t in tasks.into_iter().flatten() {
                tokio::spawn(t);
            }
            // Until the follower is dropped, and the sender with it.
            let _ = stopped.await;
        });
    });
    if let Err(e) = spawned {
        let tasks = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Ok(here) = tokio::runtime::Handle::try_current() else {
            tracing::error!(error = %e, "control: no thread for the follower, and no runtime to run it on; not following");
            return Running::Tasks(Vec::new());
        };
        tracing::error!(error = %e, "control: no thread for the follower; it runs on the caller's runtime");
        let handles = tasks.into_iter().flatten().map(|t| here.spawn(t)).collect();
        return Running::Tasks(handles);
    }
    Running::Thread(stop)
}
