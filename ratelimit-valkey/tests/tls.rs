//! The `tls` feature: a `valkeys://` URL goes through rustls (with its
//! `ring` provider, so building the TLS client cannot panic for want of a
//! crypto provider) and a server that is not TLS is a connect error.
#![cfg(feature = "tls")]

use std::io::Write;
use std::net::TcpListener;
use std::time::Duration;

use ratelimit_valkey::{Error, ValkeyBackend};

#[tokio::test]
async fn a_tls_handshake_with_a_plain_server_is_a_connect_error() {
    // A plain TCP server on 127.0.0.1 that answers the TLS hello with junk.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            let _ = s.write_all(b"-ERR not tls\r\n");
        }
    });
    let result = ValkeyBackend::builder(format!("valkeys://127.0.0.1:{port}"))
        .connect_timeout(Duration::from_secs(5))
        .require_connection(true)
        .build()
        .await;
    match result {
        Err(Error::Connect { .. }) => {}
        other => panic!("expected a connect error, got {other:?}"),
    }
    server.join().expect("server thread");
}
