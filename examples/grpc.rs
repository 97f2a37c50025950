//! gRPC: a tonic server behind the rate-limit layer, and a tonic client
//! that prints each status and its metadata.
//!
//! The server serves `grpc.health.v1` (tonic-health's generated code: no
//! protoc) behind one rule of 3 checks per minute per client address, with
//! `RateLimit` headers; the layer reads the address from tonic's
//! `TcpConnectInfo` (ratelimit-tower's `tonic` feature). The client calls
//! `Check` 5 times over loopback: three `OK`, then `RESOURCE_EXHAUSTED`
//! with `retry-after`, `grpc-retry-pushback-ms` and the `RetryInfo` of
//! `grpc-status-details-bin`; then a `Watch` (a server stream), refused at
//! the call itself. Then it exits.
//!
//! ```text
//! cargo run --example grpc
//! ```
#![allow(clippy::print_stdout)]

use ratelimit_tower::RateLimitLayer;
use tokio::net::TcpListener;
use tonic::metadata::MetadataMap;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Server};
use tonic::Status;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_types::StatusExt;

const RULES: &str = r#"[{
    "id": "health",
    "expression": "grpc.service eq \"grpc.health.v1.Health\"",
    "algorithm": "token_bucket",
    "limit": 3,
    "burst": 3,
    "period": "1m",
    "key": ["ip"],
    "ratelimit_headers": true
}]"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let layer = RateLimitLayer::from_json_str(RULES)?;
    let (_reporter, health) = tonic_health::server::health_reporter();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(
        Server::builder()
            .layer(layer)
            .add_service(health)
            .serve_with_incoming(TcpIncoming::from(listener)),
    );
    println!("gRPC server on {addr}; calling grpc.health.v1.Health/Check 5 times\n");

    let channel = Channel::from_shared(format!("http://{addr}"))?
        .connect()
        .await?;
    let mut client = HealthClient::new(channel);
    let request = || HealthCheckRequest {
        service: String::new(),
    };
    for i in 1..=5 {
        match client.check(request()).await {
            Ok(res) => {
                println!("Check #{i}: OK ({:?})", res.get_ref().status());
                print_metadata(res.metadata());
            }
            Err(status) => print_status(&format!("Check #{i}"), &status),
        }
    }
    match client.watch(request()).await {
        Ok(_) => println!("Watch: OK (a stream)"),
        Err(status) => print_status("Watch (refused at the call)", &status),
    }
    Ok(())
}

fn print_status(call: &str, status: &Status) {
    println!("{call}: {:?} \"{}\"", status.code(), status.message());
    print_metadata(status.metadata());
    if let Some(info) = status.get_details_retry_info() {
        println!(
            "  RetryInfo (grpc-status-details-bin): {:?}",
            info.retry_delay
        );
    }
}

fn print_metadata(metadata: &MetadataMap) {
    for name in [
        "retry-after",
        "grpc-retry-pushback-ms",
        "ratelimit-policy",
        "ratelimit",
    ] {
        if let Some(v) = metadata.get(name).and_then(|v| v.to_str().ok()) {
            println!("  {name}: {v}");
        }
    }
}
