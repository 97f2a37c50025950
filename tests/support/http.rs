//! HTTP over loopback TCP: axum servers (with `ConnectInfo`), a roomy hyper
//! server that accepts header floods so that they reach the layer, a raw
//! HTTP/1.1 client that writes exactly the bytes a test gives it, and a
//! keep-alive hyper client.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use ratelimit_tower::SetClientIp;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Serves `app` with axum and `ConnectInfo<SocketAddr>` on an ephemeral
/// loopback port.
pub async fn serve_axum(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let svc = app.into_make_service_with_connect_info::<SocketAddr>();
        let _ = axum::serve(listener, svc).await;
    });
    addr
}

/// Serves `app` with hyper's HTTP/1 server configured to take up to 20,000
/// header lines and 8 MiB of head, so that floods reach the rate-limit
/// layer instead of being refused by hyper's defaults (100 lines, ~400
/// KiB). The peer address is set with [`SetClientIp`].
pub async fn serve_roomy(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            let svc = SetClientIp::new(app.clone(), peer.ip());
            let svc = hyper_util::service::TowerToHyperService::new(svc);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .max_headers(20_000)
                    .max_buf_size(8 * 1024 * 1024)
                    .pipeline_flush(true)
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

/// One response, as read off the wire.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl RawResponse {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads one HTTP/1.1 response; `Ok(None)` when the server closed first.
pub async fn read_response<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
) -> io::Result<Option<RawResponse>> {
    let mut line = String::new();
    if r.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("not a status line: {line:?}")));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("no status in {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).await? == 0 {
            return Err(bad("closed inside the head"));
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h
            .split_once(':')
            .ok_or_else(|| bad("header without colon"))?;
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(len) = get("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        body.resize(len, 0);
        r.read_exact(&mut body).await?;
    } else if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).await?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            let mut chunk = vec![0u8; size + 2];
            r.read_exact(&mut chunk).await?;
            chunk.truncate(size);
            body.extend_from_slice(&chunk);
            if size == 0 {
                break;
            }
        }
    } else if status != 204 && status != 304 && !(100..200).contains(&status) {
        r.read_to_end(&mut body).await?;
    }
    Ok(Some(RawResponse {
        status,
        headers,
        body,
    }))
}

/// Writes `bytes` on a fresh connection to `addr` and reads one response,
/// within 10 s.
pub async fn exchange(addr: SocketAddr, bytes: &[u8]) -> io::Result<RawResponse> {
    let work = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(bytes).await?;
        let mut r = BufReader::new(stream);
        read_response(&mut r)
            .await?
            .ok_or_else(|| bad("the server closed without answering"))
    };
    tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no answer in 10 s"))?
}

/// A `GET` request's bytes: `target` (path and query, written as given),
/// then `headers` (raw bytes each: `name: value` without CRLF).
pub fn get(target: &[u8], headers: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + headers.iter().map(|h| h.len() + 2).sum::<usize>());
    out.extend_from_slice(b"GET ");
    out.extend_from_slice(target);
    out.extend_from_slice(b" HTTP/1.1\r\nhost: test.local\r\n");
    for h in headers {
        out.extend_from_slice(h);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Sends `requests` pipelined over one connection, `depth` at a time, and
/// returns every status in order.
pub async fn pipeline(
    addr: SocketAddr,
    requests: impl IntoIterator<Item = Vec<u8>>,
    depth: usize,
) -> io::Result<Vec<u16>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(256 * 1024, rd);
    let mut out = Vec::new();
    let mut batch = Vec::new();
    let mut pending = 0;
    let mut iter = requests.into_iter().peekable();
    while iter.peek().is_some() {
        batch.clear();
        pending = 0;
        for req in iter.by_ref().take(depth) {
            batch.extend_from_slice(&req);
            pending += 1;
        }
        wr.write_all(&batch).await?;
        for _ in 0..pending {
            let resp = tokio::time::timeout(Duration::from_secs(10), read_response(&mut rd))
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "pipelined answer"))??
                .ok_or_else(|| bad("the server closed a pipelined connection"))?;
            out.push(resp.status);
        }
    }
    let _ = pending;
    Ok(out)
}

/// A keep-alive HTTP/1.1 client connection (hyper).
pub struct KeepAlive {
    sender: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
}

impl KeepAlive {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(conn);
        Ok(Self { sender })
    }

    /// `GET path` with `headers`; the status and the `Retry-After` header.
    pub async fn get(
        &mut self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> io::Result<(u16, Option<String>)> {
        let mut b = http::Request::builder()
            .method("GET")
            .uri(path)
            .header("host", "test.local");
        for (n, v) in headers {
            b = b.header(*n, *v);
        }
        let req = b.body(Empty::new()).map_err(io::Error::other)?;
        self.sender.ready().await.map_err(io::Error::other)?;
        let res = self
            .sender
            .send_request(req)
            .await
            .map_err(io::Error::other)?;
        let status = res.status().as_u16();
        let retry = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        res.into_body().collect().await.map_err(io::Error::other)?;
        Ok((status, retry))
    }
}
