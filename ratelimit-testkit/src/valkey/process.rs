//! A spawned `valkey-server` process and its scratch directory.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::binary::{find_valkey_server, INSTALL_HINT};
use super::resp::command;

/// A free loopback port.
///
/// # Panics
///
/// When no port can be bound on 127.0.0.1.
pub fn free_port() -> u16 {
    free_port_for(false).unwrap_or_else(|e| panic!("{e}"))
}

/// A free loopback port (and, for cluster nodes, its bus port + 10000).
pub(crate) fn free_port_for(cluster: bool) -> Result<u16, String> {
    for _ in 0..50 {
        let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        if !cluster {
            return Ok(port);
        }
        if port < 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return Ok(port);
        }
    }
    Err("no free port".into())
}

/// Whether [`Process::spawn`] failed because another process took the
/// port (a server answering there, or ours exiting at start, unable to
/// bind it).
pub(crate) fn port_taken(error: &str) -> bool {
    error.contains("answers for another server") || error.contains("exited at start")
}

/// A spawned process and its scratch directory.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) port: u16,
    child: Option<Child>,
    dir: PathBuf,
}

impl Process {
    pub(crate) fn spawn(port: u16, extra: &[String]) -> Result<Self, String> {
        let bin = find_valkey_server()?;
        // A new directory for each start: a server restarted on the same
        // port must not share (or delete) its predecessor's.
        static STARTS: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ratelimit-valkey-{}-{port}-{}",
            std::process::id(),
            STARTS.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&bin);
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}; {INSTALL_HINT}", bin.display()))?;
        let mut p = Process {
            port,
            child: Some(child),
            dir,
        };
        p.wait_for_ping()?;
        Ok(p)
    }

    fn wait_for_ping(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if command(self.port, &["PING"]).as_deref() == Ok("PONG") {
                // Another test's server may hold the port (free ports race
                // between tests running in parallel): it must be ours.
                let info = command(self.port, &["INFO", "server"]).unwrap_or_default();
                let pid = super::info::info_field(&info, "process_id");
                if pid == self.pid().map(|p| p.to_string()) {
                    return Ok(());
                }
                return Err(format!(
                    "port {} answers for another server (process {pid:?})",
                    self.port
                ));
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(format!("valkey-server exited at start: {status}"));
                }
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err("valkey-server did not answer PING within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to the process with `kill(1)`.
    pub(crate) fn signal(&self, signal: &str) -> Result<(), String> {
        let pid = self.pid().ok_or("the server is not running")?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .map_err(|e| format!("kill(1): {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("kill -{signal} {pid} failed: {status}"))
        }
    }

    /// Kills the process now (SIGKILL; a paused one is continued first).
    pub(crate) fn kill(&mut self) {
        if self.child.is_some() {
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(self.pid().unwrap_or(0).to_string())
                .stderr(Stdio::null())
                .status();
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_another_server_holds_is_told_apart_so_spawn_moves_on() {
        let first = super::super::spawned();
        let port = first.port().expect("spawned");
        let e = Process::spawn(port, &[]).expect_err("the port is taken");
        assert!(port_taken(&e), "{e}");
        assert!(!port_taken("valkey-server did not answer PING within 10 s"));
    }
}
