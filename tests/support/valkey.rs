//! Valkey for the tests: servers of the `testing` harness, a server of our
//! own on a chosen port (to restart on the same port and to pause with
//! SIGSTOP), and `INFO` readers.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ratelimit_valkey::testing::{find_valkey_server, ValkeyServer};

use super::wall_ms;

/// A server of the harness, or a failure naming the install script (tests
/// never skip).
pub fn harness_server() -> ValkeyServer {
    ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"))
}

/// A free loopback port.
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// A `valkey-server` this test spawns itself, on a port it picks, so it can
/// be killed and started again on the same port, and paused.
#[derive(Debug)]
pub struct OwnedServer {
    port: u16,
    child: Option<Child>,
    dir: std::path::PathBuf,
}

impl OwnedServer {
    /// Starts a server on `port` (`--save "" --appendonly no`) and waits
    /// until it answers `PING`.
    pub fn start(port: u16) -> Self {
        let bin = find_valkey_server().unwrap_or_else(|e| panic!("{e}"));
        let dir = std::env::temp_dir().join(format!(
            "ratelimit-tests-{}-{port}-{}",
            std::process::id(),
            wall_ms()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let child = Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e}; run scripts/install-valkey.sh",
                    bin.display()
                )
            });
        let mut s = Self {
            port,
            child: Some(child),
            dir,
        };
        s.wait_for_ping();
        s
    }

    fn wait_for_ping(&mut self) {
        let start = Instant::now();
        loop {
            if ping(self.port) {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("valkey-server exited at start: {status}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "valkey-server on port {} did not answer PING in 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The process id of the spawned child.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to process `pid` with `kill(1)`.
    pub fn signal(pid: u32, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("run kill(1)");
        assert!(status.success(), "kill -{signal} {pid} failed: {status}");
    }
}

impl Drop for OwnedServer {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_ref() {
            // A stopped process still dies of SIGKILL; CONT first anyway.
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(c.id().to_string())
                .stderr(Stdio::null())
                .status();
        }
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a server on `port` answers `PING` within 1 s.
pub fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// A fresh connection to `url` (management commands, not rate limiting).
pub async fn connect(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .expect("valkey url")
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// `INFO <section>` of the server at `url`.
pub async fn info(url: &str, section: &str) -> String {
    let mut c = connect(url).await;
    redis::cmd("INFO")
        .arg(section)
        .query_async(&mut c)
        .await
        .expect("INFO")
}

/// A `name:value` field of an `INFO` reply.
pub fn info_field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

/// Field `field` (`calls`, `failed_calls`, `rejected_calls`) of `cmd` in an
/// `INFO commandstats` reply; 0 when the command never ran.
pub fn cmdstat(info: &str, cmd: &str, field: &str) -> u64 {
    let Some(line) = info_field(info, &format!("cmdstat_{cmd}")) else {
        return 0;
    };
    line.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// `EVALSHA` calls the server at `url` received: (calls, failed, rejected).
pub async fn evalsha_stats(url: &str) -> (u64, u64, u64) {
    let i = info(url, "commandstats").await;
    (
        cmdstat(&i, "evalsha", "calls"),
        cmdstat(&i, "evalsha", "failed_calls"),
        cmdstat(&i, "evalsha", "rejected_calls"),
    )
}

/// The `process_id` of `INFO server`.
pub async fn process_id(url: &str) -> u32 {
    let i = info(url, "server").await;
    info_field(&i, "process_id")
        .and_then(|p| p.parse().ok())
        .expect("INFO server has process_id")
}

/// Checks that Valkey `TIME` and the wall clock of this process agree to
/// the millisecond: the bounds of `super::bounds` rely on it. Returns the
/// server's time in ms and the bracket it fell in.
pub async fn assert_same_clock(url: &str) -> (u64, u64, u64) {
    let mut c = connect(url).await;
    for _ in 0..5 {
        let before = wall_ms();
        let (secs, micros): (u64, u64) =
            redis::cmd("TIME").query_async(&mut c).await.expect("TIME");
        let after = wall_ms();
        let t = secs * 1000 + micros / 1000;
        if before <= t && t <= after {
            return (t, before, after);
        }
    }
    panic!("Valkey TIME and the wall clock of this host disagree: the window checks need one clock")
}

/// A [`ChaosProxy`](ratelimit_valkey::testing::ChaosProxy) on a thread and
/// runtime of its own: the "network" does not queue behind the clients of
/// the test's runtime. Dereferences to the proxy; stops when dropped.
#[derive(Debug)]
pub struct IsolatedProxy {
    proxy: Option<ratelimit_valkey::testing::ChaosProxy>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl IsolatedProxy {
    /// A proxy forwarding to `target` (`host:port`).
    pub fn start(target: String) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("proxy runtime");
            rt.block_on(async move {
                let proxy = ratelimit_valkey::testing::ChaosProxy::start(target).await;
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
    type Target = ratelimit_valkey::testing::ChaosProxy;

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
