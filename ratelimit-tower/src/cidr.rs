//! An address range such as `10.0.0.0/8` or `2001:db8::/32`.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An IPv4 or IPv6 range in CIDR notation. A bare address is a range of one.
///
/// IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are compared as IPv4.
///
/// # Examples
///
/// ```
/// use ratelimit_tower::Cidr;
///
/// let net: Cidr = "10.0.0.0/8".parse().unwrap();
/// assert!(net.contains("10.1.2.3".parse().unwrap()));
/// assert!(net.contains("::ffff:10.1.2.3".parse().unwrap()));
/// assert!(!net.contains("11.0.0.1".parse().unwrap()));
/// assert!("10.0.0.0/33".parse::<Cidr>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// The range of `addr` with the first `prefix` bits fixed.
    ///
    /// # Errors
    ///
    /// A prefix longer than the address (32 for IPv4, 128 for IPv6).
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Self, CidrError> {
        let (addr, prefix) = match addr {
            IpAddr::V6(v6) if prefix >= 96 && v6.to_ipv4_mapped().is_some() => {
                (addr.to_canonical(), prefix - 96)
            }
            _ => (addr, prefix),
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(CidrError(()));
        }
        Ok(Self { addr, prefix })
    }

    /// Whether `ip` is inside the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => prefix_eq(
                u128::from(u32::from(net)) << 96,
                u128::from(u32::from(ip)) << 96,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_eq(u128::from(net), u128::from(ip), self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_eq(a: u128, b: u128, prefix: u8) -> bool {
    match prefix {
        0 => true,
        p => (a ^ b) >> (128 - u32::from(p.min(128))) == 0,
    }
}

impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| CidrError(()))?;
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().map_err(|_| CidrError(()))?,
            None if addr.is_ipv4() => 32,
            None => 128,
        };
        Cidr::new(addr, prefix)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// A string that is not an address range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidrError(());

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid address range, expected such as 10.0.0.0/8")
    }
}

impl std::error::Error for CidrError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> Cidr {
        s.parse().unwrap()
    }

    #[test]
    fn ranges_contain_their_addresses_only() {
        assert!(net("192.168.0.0/16").contains("192.168.255.1".parse().unwrap()));
        assert!(!net("192.168.0.0/16").contains("192.169.0.1".parse().unwrap()));
        assert!(net("0.0.0.0/0").contains("8.8.8.8".parse().unwrap()));
        assert!(!net("0.0.0.0/0").contains("::1".parse().unwrap()));
        assert!(net("2001:db8::/32").contains("2001:db8:1::1".parse().unwrap()));
        assert!(!net("2001:db8::/32").contains("2001:db9::1".parse().unwrap()));
        assert!(net("127.0.0.1").contains("127.0.0.1".parse().unwrap()));
        assert!(!net("127.0.0.1").contains("127.0.0.2".parse().unwrap()));
        assert!(net("::/0").contains("2001:db8::1".parse().unwrap()));
        assert!(net("::ffff:10.0.0.0/104").contains("10.9.9.9".parse().unwrap()));
        assert!(net("::ffff:10.0.0.1").contains("10.0.0.1".parse().unwrap()));
        assert!(!net("::ffff:10.0.0.1").contains("10.0.0.2".parse().unwrap()));
    }

    #[test]
    fn bad_ranges_are_refused() {
        for s in [
            "",
            "10.0.0.0/",
            "10.0.0.0/33",
            "::/129",
            "x/8",
            "10.0.0.0/-1",
            "10.0.0.0/8/8",
        ] {
            assert!(s.parse::<Cidr>().is_err(), "{s}");
        }
    }
}
