//! A TCP proxy on 127.0.0.1 that tests control: pass, down, or delay.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyMode {
    /// Forward everything.
    Pass,
    /// Cut every open connection and close new ones at once ("Valkey down").
    Down,
    /// Forward, holding every chunk this long in each direction.
    Delay(Duration),
}

#[derive(Debug)]
struct Shared {
    mode: Mutex<ProxyMode>,
    cut: watch::Sender<u64>,
    connections: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
}

/// A chaos proxy in front of a server; stops when dropped.
#[derive(Debug)]
pub struct ChaosProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl ChaosProxy {
    /// Listens on a free 127.0.0.1 port and forwards to `target`
    /// (`host:port`). Must be called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// When the listener cannot be bound.
    pub async fn start(target: impl Into<String>) -> Result<Self, String> {
        let target = target.into();
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let (cut, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            mode: Mutex::new(ProxyMode::Pass),
            cut,
            connections: AtomicU64::new(0),
            bytes_up: AtomicU64::new(0),
            bytes_down: AtomicU64::new(0),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                s.connections.fetch_add(1, Ordering::SeqCst);
                if s.mode() == ProxyMode::Down {
                    drop(client);
                    continue;
                }
                tokio::spawn(serve(client, target.clone(), s.clone()));
            }
        });
        Ok(Self { addr, shared, task })
    }

    /// The proxy's URL (`redis://127.0.0.1:port`).
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Switches mode; `Down` cuts every open connection.
    pub fn set_mode(&self, mode: ProxyMode) {
        *self.shared.mode.lock().unwrap_or_else(|e| e.into_inner()) = mode;
        if mode == ProxyMode::Down {
            self.shared.cut.send_modify(|g| *g += 1);
        }
    }

    /// Connections accepted so far (refused ones included).
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Bytes forwarded client to server.
    pub fn bytes_up(&self) -> u64 {
        self.shared.bytes_up.load(Ordering::SeqCst)
    }

    /// Bytes forwarded server to client.
    pub fn bytes_down(&self) -> u64 {
        self.shared.bytes_down.load(Ordering::SeqCst)
    }
}

impl Drop for ChaosProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.shared.cut.send_modify(|g| *g += 1);
    }
}

impl Shared {
    fn mode(&self) -> ProxyMode {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner())
    }
}

async fn serve(client: TcpStream, target: String, s: Arc<Shared>) {
    let Ok(server) = TcpStream::connect(&target).await else {
        return;
    };
    let mut cut = s.cut.subscribe();
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = pump(&mut cr, &mut sw, &s, &s.bytes_up);
    let down = pump(&mut sr, &mut cw, &s, &s.bytes_down);
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = cut.changed() => {}
    }
}

async fn pump(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    s: &Shared,
    counter: &AtomicU64,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        match s.mode() {
            ProxyMode::Down => return,
            ProxyMode::Delay(d) => tokio::time::sleep(d).await,
            ProxyMode::Pass => {}
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
        counter.fetch_add(n as u64, Ordering::SeqCst);
    }
}
