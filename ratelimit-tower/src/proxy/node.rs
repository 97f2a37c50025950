//! One node of a forwarding chain, as an address.

use std::net::IpAddr;

/// One node: `1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]`, `[2001:db8::1]:80`,
/// `2001:db8::1`, any of them in quotes. `unknown` and `_obfuscated` are not
/// addresses.
pub(crate) fn parse_node(node: &str) -> Option<IpAddr> {
    let mut s = node.trim();
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        s = inner.trim();
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (addr, tail) = rest.split_once(']')?;
        if !(tail.is_empty() || is_port(tail.strip_prefix(':')?)) {
            return None;
        }
        return addr.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let (addr, port) = s.rsplit_once(':')?;
    if !is_port(port) {
        return None;
    }
    addr.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// A port: digits, or an obfuscated `_port` (RFC 7239).
fn is_port(p: &str) -> bool {
    let digits = (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    let obfuscated = p.len() > 1
        && p.starts_with('_')
        && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    digits || obfuscated
}
