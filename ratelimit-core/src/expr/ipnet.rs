//! Addresses, networks and sets of them, for `ip.src`.
//!
//! Every address is put in canonical form first: an IPv4-mapped IPv6 address
//! (`::ffff:192.0.2.1`) is the IPv4 address, in the request and in the
//! expression alike, and a mapped network with a prefix of at least 96 bits is
//! the matching IPv4 network. A set keeps IPv4 and IPv6 networks as sorted,
//! merged ranges, so membership is a binary search.

use std::net::IpAddr;

/// A set of IPv4 and IPv6 networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IpSet {
    v4: Vec<(u128, u128)>,
    v6: Vec<(u128, u128)>,
}

impl IpSet {
    /// A set of the networks `nets`, as (canonical address, prefix length).
    pub(crate) fn new(nets: impl IntoIterator<Item = (IpAddr, u8)>) -> Self {
        let mut set = Self::default();
        for (addr, prefix) in nets {
            match addr {
                IpAddr::V4(a) => set.v4.push(range(u128::from(u32::from(a)), prefix, 32)),
                IpAddr::V6(a) => set.v6.push(range(u128::from(a), prefix, 128)),
            }
        }
        merge(&mut set.v4);
        merge(&mut set.v6);
        set
    }

    /// Whether the set holds every IPv4 or every IPv6 address.
    pub(crate) fn covers_a_family(&self) -> bool {
        self.v4 == [(0, u128::from(u32::MAX))] || self.v6 == [(0, u128::MAX)]
    }

    /// Whether `addr` (canonical or not) is in one of the networks.
    pub(crate) fn contains(&self, addr: IpAddr) -> bool {
        let (ranges, x) = match addr.to_canonical() {
            IpAddr::V4(a) => (&self.v4, u128::from(u32::from(a))),
            IpAddr::V6(a) => (&self.v6, u128::from(a)),
        };
        let i = ranges.partition_point(|&(_, end)| end < x);
        ranges.get(i).is_some_and(|&(start, _)| start <= x)
    }
}

/// The first and last address of `addr/prefix` in a space of `bits` bits
/// (`addr` right-aligned in the `u128`); host bits are ignored.
fn range(addr: u128, prefix: u8, bits: u32) -> (u128, u128) {
    let host_bits = bits.saturating_sub(u32::from(prefix));
    // Shifting by 128 (no host bits) is `None`: an all-zero mask.
    let host_mask = u128::MAX.checked_shr(128 - host_bits).unwrap_or(0);
    (addr & !host_mask, addr | host_mask)
}

/// Sorts ranges and merges those that overlap or touch.
fn merge(ranges: &mut Vec<(u128, u128)>) {
    ranges.sort_unstable();
    let mut merged: Vec<(u128, u128)> = Vec::with_capacity(ranges.len());
    for &(start, end) in ranges.iter() {
        match merged.last_mut() {
            Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    *ranges = merged;
}

/// Parses an address, in canonical form.
pub(crate) fn parse_addr(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>().ok().map(|a| a.to_canonical())
}

/// Parses `addr` or `addr/prefix` into a canonical address and a prefix
/// length; a bare address is a network of one.
pub(crate) fn parse_net(text: &str) -> Option<(IpAddr, u8)> {
    let (addr_text, prefix_text) = match text.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text, None),
    };
    let addr: IpAddr = addr_text.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix_text {
        None => max,
        Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<u8>().ok().filter(|&n| n <= max)?
        }
        Some(_) => return None,
    };
    Some(match addr {
        IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
            Some(v4) => (IpAddr::V4(v4), prefix - 96),
            None => (addr, prefix),
        },
        _ => (addr, prefix),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(nets: &[&str]) -> IpSet {
        IpSet::new(nets.iter().map(|n| parse_net(n).unwrap()))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn v4_cidr_membership_covers_exactly_the_network() {
        let s = set(&["10.0.0.0/8", "192.0.2.1"]);
        assert!(s.contains(ip("10.0.0.0")));
        assert!(s.contains(ip("10.255.255.255")));
        assert!(!s.contains(ip("11.0.0.0")));
        assert!(!s.contains(ip("9.255.255.255")));
        assert!(s.contains(ip("192.0.2.1")));
        assert!(!s.contains(ip("192.0.2.2")));
    }

    #[test]
    fn v6_cidr_membership_covers_exactly_the_network() {
        let s = set(&["2001:db8::/32", "::1"]);
        assert!(s.contains(ip("2001:db8::1")));
        assert!(s.contains(ip("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")));
        assert!(!s.contains(ip("2001:db9::")));
        assert!(s.contains(ip("::1")));
        assert!(!s.contains(ip("::2")));
    }

    #[test]
    fn v4_and_v6_sets_do_not_mix_except_through_mapping() {
        let s = set(&["0.0.0.0/0"]);
        assert!(s.contains(ip("203.0.113.9")));
        assert!(s.contains(ip("::ffff:203.0.113.9")));
        assert!(!s.contains(ip("2001:db8::1")));
        let s = set(&["::/0"]);
        assert!(!s.contains(ip("203.0.113.9")));
        assert!(s.contains(ip("2001:db8::1")));
    }

    #[test]
    fn mapped_networks_become_v4_networks() {
        assert_eq!(parse_net("::ffff:10.0.0.0/104"), Some((ip("10.0.0.0"), 8)));
        assert!(set(&["::ffff:10.0.0.0/104"]).contains(ip("10.1.2.3")));
    }

    #[test]
    fn host_bits_in_a_network_are_ignored() {
        assert!(set(&["192.0.2.77/24"]).contains(ip("192.0.2.1")));
    }

    #[test]
    fn overlapping_and_adjacent_networks_merge() {
        let s = set(&["10.0.0.0/9", "10.128.0.0/9", "10.1.0.0/16", "12.0.0.0/8"]);
        assert_eq!(s.v4.len(), 2);
        assert!(s.contains(ip("10.200.0.1")));
        assert!(!s.contains(ip("11.0.0.1")));
        assert!(s.contains(ip("12.0.0.1")));
    }

    #[test]
    fn malformed_networks_are_refused() {
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "10.0.0/8",
            "x",
            "1/2/3",
        ] {
            assert_eq!(parse_net(bad), None, "{bad}");
        }
        assert_eq!(parse_net("10.0.0.0/0"), Some((ip("10.0.0.0"), 0)));
    }
}
