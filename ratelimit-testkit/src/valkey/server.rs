//! A `valkey-server` for tests: found, spawned on a loopback port, killed
//! on drop.

use super::process::{free_port_for, port_taken, Process};

/// A single Valkey server for tests.
#[derive(Debug)]
pub struct ValkeyServer {
    url: String,
    process: Option<Process>,
}

impl ValkeyServer {
    /// Uses `VALKEY_URL` if set, else spawns `valkey-server` on a free
    /// 127.0.0.1 port with `--save "" --appendonly no` and waits until it
    /// answers `PING`.
    ///
    /// # Errors
    ///
    /// When no server can be had, with a message naming
    /// `scripts/install-valkey.sh`.
    pub fn start() -> Result<Self, String> {
        if let Ok(url) = std::env::var("VALKEY_URL") {
            return Ok(Self { url, process: None });
        }
        Self::spawn()
    }

    /// Always spawns a server of its own (ignores `VALKEY_URL`), on
    /// another free port if the one found was taken meanwhile (tests of
    /// one binary, or several binaries, start servers in parallel: once a
    /// scenario failed with "port .. answers for another server").
    ///
    /// # Errors
    ///
    /// As [`ValkeyServer::start`].
    pub fn spawn() -> Result<Self, String> {
        let mut tries = 0;
        loop {
            tries += 1;
            match Self::spawn_on(free_port_for(false)?) {
                Err(e) if tries < 5 && port_taken(&e) => continue,
                r => return r,
            }
        }
    }

    /// Spawns a server of its own on `port` (ignores `VALKEY_URL`): a test
    /// can [`kill`](Self::kill) it and start another on the same port.
    ///
    /// # Errors
    ///
    /// As [`ValkeyServer::start`], or when the port is taken.
    pub fn spawn_on(port: u16) -> Result<Self, String> {
        let process = Process::spawn(port, &[])?;
        Ok(Self {
            url: format!("redis://127.0.0.1:{port}"),
            process: Some(process),
        })
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The port of a spawned server (`None` with `VALKEY_URL`).
    pub fn port(&self) -> Option<u16> {
        self.process.as_ref().map(|p| p.port)
    }

    /// The process id of a spawned server while it runs (`None` with
    /// `VALKEY_URL` or once killed).
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Process::pid)
    }

    /// Kills a spawned server now (SIGKILL); a no-op with `VALKEY_URL`.
    pub fn kill(&mut self) {
        if let Some(p) = self.process.as_mut() {
            p.kill();
        }
    }

    /// Sends `signal` (`STOP` to pause the server, `CONT` to resume it)
    /// with `kill(1)`.
    ///
    /// # Errors
    ///
    /// With `VALKEY_URL`, once killed, or when `kill(1)` fails.
    pub fn signal(&self, signal: &str) -> Result<(), String> {
        self.process
            .as_ref()
            .ok_or_else(|| "not a spawned server".to_string())?
            .signal(signal)
    }

    /// Starts a cluster of `primaries` nodes: see [`super::ValkeyCluster`].
    ///
    /// # Errors
    ///
    /// As [`ValkeyServer::start`], or when the cluster does not form.
    pub fn start_cluster(primaries: usize) -> Result<super::ValkeyCluster, String> {
        super::ValkeyCluster::start(primaries)
    }
}

/// [`ValkeyServer::start`], or a panic whose message names
/// `scripts/install-valkey.sh`: tests never skip.
pub fn server() -> ValkeyServer {
    ValkeyServer::start().unwrap_or_else(|e| panic!("{e}"))
}

/// [`ValkeyServer::spawn`] (always a server of its own), or a panic whose
/// message names `scripts/install-valkey.sh`.
pub fn spawned() -> ValkeyServer {
    ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"))
}
