//! Networks: [`Cidr`], and the sets of networks that `ip.src in {...}` and a
//! rule's `allow` list test.
//!
//! Every address is put in canonical form first: an IPv4-mapped IPv6 address
//! (`::ffff:192.0.2.1`) is the IPv4 address, in the request and in the
//! expression alike, and a mapped network with a prefix of at least 96 bits is
//! the matching IPv4 network. A set keeps IPv4 and IPv6 networks as sorted,
//! merged ranges, so membership is a binary search.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An IPv4 or IPv6 network in CIDR notation, such as `10.0.0.0/8` or
/// `2001:db8::/32`; a bare address is a network of one.
///
/// The one network type of the workspace: `ip.src in {10.0.0.0/8}` in an
/// expression, a rule's `allow` list and `ratelimit-tower`'s trusted proxies
/// all read networks the same way. An IPv4-mapped IPv6 network
/// (`::ffff:10.0.0.0/104`) is the IPv4 network, and an IPv4-mapped address
/// is compared as IPv4. Host bits are ignored (`192.0.2.77/24` holds
/// `192.0.2.1`).
///
/// # Examples
///
/// ```
/// use ratelimit_core::Cidr;
///
/// let net: Cidr = "10.0.0.0/8".parse().unwrap();
/// assert!(net.contains("10.1.2.3".parse().unwrap()));
/// assert!(net.contains("::ffff:10.1.2.3".parse().unwrap()));
/// assert!(!net.contains("11.0.0.1".parse().unwrap()));
/// assert_eq!(net.prefix(), 8);
/// assert_eq!(net.to_string(), "10.0.0.0/8");
/// assert!("10.0.0.0/33".parse::<Cidr>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    /// Canonical: an IPv4-mapped network with a prefix of at least 96 bits
    /// is stored as the IPv4 network.
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// The network of `addr` with the first `prefix` bits fixed.
    ///
    /// # Errors
    ///
    /// A prefix longer than the address (32 for IPv4, 128 for IPv6).
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Self, CidrError> {
        let (addr, prefix) = match addr {
            IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
                Some(v4) => (IpAddr::V4(v4), prefix - 96),
                None => (addr, prefix),
            },
            _ => (addr, prefix),
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(CidrError(()));
        }
        Ok(Self { addr, prefix })
    }

    /// The network's address, as written (host bits kept).
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The prefix length, in bits.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Whether `ip` (canonical or not) is inside the network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let (start, end) = self.range();
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(_), IpAddr::V4(a)) => (start..=end).contains(&u128::from(u32::from(a))),
            (IpAddr::V6(_), IpAddr::V6(a)) => (start..=end).contains(&u128::from(a)),
            _ => false,
        }
    }

    /// The first and last address, right-aligned in a `u128`.
    fn range(&self) -> (u128, u128) {
        match self.addr {
            IpAddr::V4(a) => range(u128::from(u32::from(a)), self.prefix, 32),
            IpAddr::V6(a) => range(u128::from(a), self.prefix, 128),
        }
    }
}

impl FromStr for Cidr {
    type Err = CidrError;

    /// `addr` or `addr/prefix`, surrounding whitespace ignored; the prefix
    /// is one to three decimal digits.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_net(s.trim()).ok_or(CidrError(()))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// A string that is not a network in CIDR notation.
///
/// `{:?}` is the `Display` form, so that an error returned from `main`
/// with `?` prints as a sentence.
#[derive(Clone, PartialEq, Eq)]
pub struct CidrError(());

/// The `Display` form.
impl fmt::Debug for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid address range, expected such as 10.0.0.0/8")
    }
}

impl std::error::Error for CidrError {}

/// A set of IPv4 and IPv6 networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IpSet {
    v4: Vec<(u128, u128)>,
    v6: Vec<(u128, u128)>,
}

impl IpSet {
    /// A set of the networks `nets`.
    pub(crate) fn new(nets: impl IntoIterator<Item = Cidr>) -> Self {
        let mut set = Self::default();
        for net in nets {
            match net.addr {
                IpAddr::V4(_) => set.v4.push(net.range()),
                IpAddr::V6(_) => set.v6.push(net.range()),
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

/// The bytes that key an IP (a rule's `ip` key part, the backstop): 4 for IPv4 (and IPv4-mapped IPv6), the /64
/// prefix (8 bytes) for IPv6.
#[inline]
pub(crate) fn ip_bytes(ip: IpAddr) -> ([u8; 8], usize) {
    let mut out = [0u8; 8];
    match ip {
        IpAddr::V4(v4) => {
            out[..4].copy_from_slice(&v4.octets());
            (out, 4)
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => ip_bytes(IpAddr::V4(v4)),
            None => {
                out.copy_from_slice(&v6.octets()[..8]);
                (out, 8)
            }
        },
    }
}

/// Parses an address, in canonical form.
pub(crate) fn parse_addr(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>().ok().map(|a| a.to_canonical())
}

/// Parses `addr` or `addr/prefix` (no whitespace); a bare address is a
/// network of one.
pub(crate) fn parse_net(text: &str) -> Option<Cidr> {
    let (addr_text, prefix_text) = match text.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text, None),
    };
    let addr: IpAddr = addr_text.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix_text {
        None => max,
        Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<u8>().ok()?
        }
        Some(_) => return None,
    };
    Cidr::new(addr, prefix).ok()
}

#[cfg(test)]
mod tests;
