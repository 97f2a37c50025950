//! CIDR sets: membership at the network's edges, v4 and v6 apart except
//! through mapping, merged overlaps.

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
    let mapped = parse_net("::ffff:10.0.0.0/104").unwrap();
    assert_eq!((mapped.addr(), mapped.prefix()), (ip("10.0.0.0"), 8));
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
    let all = parse_net("10.0.0.0/0").unwrap();
    assert_eq!((all.addr(), all.prefix()), (ip("10.0.0.0"), 0));
}

// The tests of `ratelimit-tower`'s former `Cidr`, which this type replaces.
fn net(s: &str) -> Cidr {
    s.parse().unwrap()
}

#[test]
fn ranges_contain_their_addresses_only() {
    assert!(net("192.168.0.0/16").contains(ip("192.168.255.1")));
    assert!(!net("192.168.0.0/16").contains(ip("192.169.0.1")));
    assert!(net("0.0.0.0/0").contains(ip("8.8.8.8")));
    assert!(!net("0.0.0.0/0").contains(ip("::1")));
    assert!(net("2001:db8::/32").contains(ip("2001:db8:1::1")));
    assert!(!net("2001:db8::/32").contains(ip("2001:db9::1")));
    assert!(net("127.0.0.1").contains(ip("127.0.0.1")));
    assert!(!net("127.0.0.1").contains(ip("127.0.0.2")));
    assert!(net("::/0").contains(ip("2001:db8::1")));
    assert!(net("::ffff:10.0.0.0/104").contains(ip("10.9.9.9")));
    assert!(net("::ffff:10.0.0.1").contains(ip("10.0.0.1")));
    assert!(!net("::ffff:10.0.0.1").contains(ip("10.0.0.2")));
    assert!(net(" 10.0.0.0/8 ").contains(ip("10.0.0.1")));
    assert!(net("192.0.2.77/24").contains(ip("192.0.2.1")));
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
        "10.0.0.0/+8",
        "10.0.0.0/8/8",
    ] {
        assert!(s.parse::<Cidr>().is_err(), "{s}");
    }
    assert!(Cidr::new(ip("10.0.0.0"), 33).is_err());
    assert_eq!(net("10.0.0.0/8").to_string(), "10.0.0.0/8");
}
