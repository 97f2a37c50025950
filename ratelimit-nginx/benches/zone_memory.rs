//! Fills `10m` nginx zones and reports the bytes they really use, and the
//! time of a decision on a full zone.
//!
//! Run it with `cargo bench -p ratelimit-nginx --bench zone_memory`.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use ratelimit_core::RequestAttrs;
use ratelimit_nginx::{Level, NginxConfig, ZoneRegistry};

const TEN_MIB: usize = 10 * 1024 * 1024;

fn request(n: u32) -> RequestAttrs {
    let ip = std::net::Ipv4Addr::from(0x0a00_0000 | n);
    RequestAttrs::new(ip.into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = NginxConfig::parse(
        "limit_req_zone $client_ip zone=req:10m rate=1r/s;\n\
         limit_conn_zone $client_ip zone=conn:10m;",
    )?;
    let zones = ZoneRegistry::new().load(&config)?;
    let limit_req = zones.limit_req(&Level::parse("limit_req zone=req burst=1 nodelay;")?)?;
    let limit_conn = zones.limit_conn(&Level::parse("limit_conn conn 1;")?)?;
    let now = 1_767_225_600_000;

    let req_zone = zones.req_zone("req").cloned().ok_or("no zone req")?;
    let start = Instant::now();
    for n in 0..req_zone.capacity() {
        // Two requests each, so that no state is idle and the zone stays full.
        black_box(limit_req.check(&request(n), now));
        black_box(limit_req.check(&request(n), now));
    }
    let fill = start.elapsed();
    let used = req_zone.memory_bytes();
    println!(
        "limit_req  10m: {} states, {} bytes used ({:.1}% of 10 MiB, {:.1} bytes/state); filled in {:?}",
        req_zone.len(),
        used,
        used as f64 * 100.0 / TEN_MIB as f64,
        used as f64 / f64::from(req_zone.len()),
        fill
    );
    let start = Instant::now();
    let rounds = 100_000u32;
    for n in 0..rounds {
        black_box(limit_req.check(&request(n % req_zone.capacity()), now));
    }
    println!(
        "limit_req  check on a full zone: {:?} each",
        start.elapsed() / rounds
    );
    let start = Instant::now();
    for n in 0..rounds {
        black_box(limit_req.check(&request(req_zone.capacity() + n), now));
    }
    println!(
        "limit_req  new key on an exhausted zone: {:?} each",
        start.elapsed() / rounds
    );

    let conn_zone = zones.conn_zone("conn").cloned().ok_or("no zone conn")?;
    let permits: Vec<_> = (0..conn_zone.capacity())
        .map(|n| limit_conn.acquire(&request(n)).into_permit())
        .collect();
    let used = conn_zone.memory_bytes();
    println!(
        "limit_conn 10m: {} states, {} bytes used ({:.1}% of 10 MiB, {:.1} bytes/state)",
        conn_zone.len(),
        used,
        used as f64 * 100.0 / TEN_MIB as f64,
        used as f64 / f64::from(conn_zone.len())
    );
    drop(permits);
    Ok(())
}
