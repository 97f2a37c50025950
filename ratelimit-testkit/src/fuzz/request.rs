//! A request read from fuzzer bytes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ratelimit_core::RequestAttrs;

use super::input::Input;

/// Reads a request from fuzzer bytes; returns it and the bytes left over.
///
/// A chunk is a length byte and that many bytes (fewer at the end of the
/// input); a missing byte reads as 0. In order:
///
/// 1. flags: bit 0 IPv6, bit 1 a cost, bit 2 verified JWT claims, bits 3
///    to 6 country, asnum, ja4 and locale;
/// 2. the address: 4 bytes, or 16 with bit 0;
/// 3. method, host, path and query: one chunk each (lossy UTF-8);
/// 4. with bit 1, the cost: 8 bytes little-endian;
/// 5. a count byte (mod 16) of headers, each a name chunk and a value chunk
///    (raw bytes, maybe not UTF-8);
/// 6. a count byte (mod 4) of `Cookie` header values (raw chunks);
/// 7. with bit 2, a count byte (mod 8) of claims, each a name and a value;
/// 8. country, asnum, ja4 and locale chunks, each when its bit is set;
/// 9. a count byte (mod 4) of application values, each a name and a value.
pub fn request_from_bytes(data: &[u8]) -> (RequestAttrs, &[u8]) {
    let mut input = Input::new(data);
    let flags = input.byte();
    let ip = if flags & 1 == 0 {
        let mut b = [0u8; 4];
        input.fill(&mut b);
        IpAddr::V4(Ipv4Addr::from(b))
    } else {
        let mut b = [0u8; 16];
        input.fill(&mut b);
        IpAddr::V6(Ipv6Addr::from(b))
    };
    let mut req = RequestAttrs::new(ip)
        .with_method(input.string())
        .with_host(input.string())
        .with_path(input.string())
        .with_query(input.string());
    if flags & 2 != 0 {
        let mut b = [0u8; 8];
        input.fill(&mut b);
        req = req.with_cost(u64::from_le_bytes(b));
    }
    for _ in 0..input.byte() % 16 {
        let name = input.string();
        req = req.with_header(&name, input.chunk());
    }
    for _ in 0..input.byte() % 4 {
        req = req.with_header("cookie", input.chunk());
    }
    if flags & 4 != 0 {
        let claims = (0..input.byte() % 8)
            .map(|_| (input.string(), input.string()))
            .collect();
        req = req.with_jwt_claims(claims);
    }
    let mut optional = |bit: u8| (flags & bit != 0).then(|| input.string());
    req.country = optional(8);
    req.asnum = optional(16);
    req.ja4 = optional(32);
    req.locale = optional(64);
    for _ in 0..input.byte() % 4 {
        let name = input.string();
        req = req.with_app_value(name, input.string());
    }
    (req, input.rest)
}
