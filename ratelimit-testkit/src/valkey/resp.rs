//! A minimal RESP client: the harness talks to the servers it starts
//! without an async client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One command over a fresh connection, with a minimal RESP reader: the
/// harness needs no async client. Returns the reply as text (an array's
/// items one per line).
pub(crate) fn command(port: u16, args: &[&str]) -> Result<String, String> {
    Conn::open(port)?.call(args)
}

/// A connection kept open for many commands (resharding sends thousands).
#[derive(Debug)]
pub(crate) struct Conn {
    r: BufReader<TcpStream>,
}

impl Conn {
    /// Connects to 127.0.0.1:`port`, replies awaited at most 5 s.
    pub(crate) fn open(port: u16) -> Result<Self, String> {
        let s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .map_err(|e| e.to_string())?;
        Ok(Self {
            r: BufReader::new(s),
        })
    }

    /// One command and its reply.
    pub(crate) fn call(&mut self, args: &[&str]) -> Result<String, String> {
        self.pipeline(&[args.iter().map(|a| a.to_string()).collect()])?
            .pop()
            .ok_or_else(|| "no reply".to_string())?
    }

    /// Commands sent together, one reply each (the connection fails as a
    /// whole only when it breaks).
    pub(crate) fn pipeline(
        &mut self,
        cmds: &[Vec<String>],
    ) -> Result<Vec<Result<String, String>>, String> {
        let mut req = String::new();
        for args in cmds {
            req.push_str(&format!("*{}\r\n", args.len()));
            for a in args {
                req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
            }
        }
        self.r
            .get_mut()
            .write_all(req.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(cmds.len());
        for _ in cmds {
            out.push(read_top(&mut self.r)?);
        }
        Ok(out)
    }
}

/// A whole reply: `Err` outside for a broken connection, inside for a
/// server error (anywhere in the reply).
fn read_top(r: &mut impl BufRead) -> Result<Result<String, String>, String> {
    match read_reply(r) {
        Ok(v) => Ok(Ok(v)),
        Err(e) if e.starts_with("io: ") => Err(e),
        Err(e) => Ok(Err(e)),
    }
}

fn read_reply(r: &mut impl BufRead) -> Result<String, String> {
    let mut line = String::new();
    if r.read_line(&mut line).map_err(|e| format!("io: {e}"))? == 0 {
        return Err("io: connection closed".into());
    }
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
            r.read_exact(&mut buf).map_err(|e| format!("io: {e}"))?;
            buf.truncate(n as usize);
            Ok(String::from_utf8_lossy(&buf).into_owned())
        }
        "*" => {
            let n: i64 = rest.parse().map_err(|_| "bad length")?;
            // Every item is read, an error among them included, so that a
            // pipeline's next reply starts where it should.
            let mut items = Vec::new();
            let mut error = None;
            for _ in 0..n.max(0) {
                match read_reply(r) {
                    Ok(item) => items.push(item),
                    Err(e) if e.starts_with("io: ") => return Err(e),
                    Err(e) => error = error.or(Some(e)),
                }
            }
            match error {
                Some(e) => Err(e),
                None => Ok(items.join("\n")),
            }
        }
        _ => Err(format!("unexpected reply {line:?}")),
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
