//! A chaos proxy on a thread and runtime of its own.

use super::proxy::ChaosProxy;

/// A [`ChaosProxy`] on a thread and runtime of its own: the "network" does
/// not queue behind the clients of the test's runtime. Dereferences to the
/// proxy; stops when dropped.
#[derive(Debug)]
pub struct IsolatedProxy {
    proxy: Option<ChaosProxy>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl IsolatedProxy {
    /// A proxy forwarding to `target` (`host:port`).
    ///
    /// # Panics
    ///
    /// When its thread or runtime cannot start, or the proxy cannot bind.
    pub fn start(target: String) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("proxy runtime");
            rt.block_on(async move {
                let proxy = ChaosProxy::start(target).await;
                let _ = tx.send(proxy);
                let _ = stopped.await;
            });
        });
        let proxy = rx
            .recv()
            .expect("proxy thread")
            .unwrap_or_else(|e| panic!("proxy: {e}"));
        Self {
            proxy: Some(proxy),
            stop: Some(stop),
        }
    }
}

impl std::ops::Deref for IsolatedProxy {
    type Target = ChaosProxy;

    fn deref(&self) -> &Self::Target {
        self.proxy.as_ref().expect("proxy")
    }
}

impl Drop for IsolatedProxy {
    fn drop(&mut self) {
        drop(self.proxy.take());
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
