//! Odd and invalid addresses in `X-Forwarded-For` / `Forwarded` behind
//! trusted proxies, over real TCP through the tower layer: each request is
//! keyed on the address it should be.
//!
//! Each case checks the answer (the limiter still limits by the right key),
//! that the server is still up (nothing panicked), and that the limiter's
//! stores stay within their configured capacities
//! (`MemoryBackend::len()`, the penalty cache's `len()`); the site is
//! `ratelimit_tests::support::hostile`.
#![allow(clippy::print_stderr)]

use std::net::IpAddr;

use ratelimit_tests::support::hostile::*;
use ratelimit_tower::{Cidr, ForwardedHeader, TrustedProxies};

/// The limit-1 rule on `/ip` tells which address a request was keyed on:
/// after `req`, a plain request whose only forwarded entry is `ip` is 429
/// (same bucket). `fresh` says whether `req` itself must be the first in
/// that bucket.
async fn assert_keyed_as(s: &Site, case: &str, req_headers: &[&[u8]], ip: &str, fresh: bool) {
    let first = s.status(b"/ip", req_headers).await;
    if fresh {
        assert_eq!(first, 200, "{case}: the first request of {ip}");
    } else {
        assert_eq!(first, 429, "{case}: keyed as {ip}, whose bucket is used");
    }
    let h = forwarded_entry(s, ip);
    assert_eq!(
        s.status(b"/ip", &[&h]).await,
        429,
        "{case}: not keyed as {ip}"
    );
}

/// The site's forwarding header naming `ip` as the only entry.
fn forwarded_entry(s: &Site, ip: &str) -> Vec<u8> {
    let ip: IpAddr = ip.parse().expect("ip");
    let value = match (s.forwarded, ip) {
        (ForwardedHeader::Forwarded, IpAddr::V4(v4)) => format!("for={v4}"),
        (ForwardedHeader::Forwarded, IpAddr::V6(v6)) => format!("for=\"[{v6}]\""),
        _ => ip.to_string(),
    };
    header(s.forwarded.name(), value.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_and_invalid_forwarded_addresses_behind_one_trusted_hop() {
    let s = site(TrustedProxies::hops(1), Server::Roomy).await;
    let xff = |v: &[u8]| header("x-forwarded-for", v);
    // The peer (127.0.0.1) takes its own bucket first.
    assert_eq!(s.status(b"/ip", &[]).await, 200);
    let ok: &[(&str, &[u8], &str)] = &[
        ("plain", b"203.0.113.10", "203.0.113.10"),
        (
            "rightmost wins",
            b"198.51.100.1, 203.0.113.11",
            "203.0.113.11",
        ),
        ("with a port", b"203.0.113.12:8080", "203.0.113.12"),
        (
            "bracketed v6 with port",
            b"[2001:db8:0:12::1]:443",
            "2001:db8:0:12::1",
        ),
        ("v4-mapped v6", b"::ffff:203.0.113.13", "203.0.113.13"),
        (
            "spaces and empty entries",
            b" ,, 203.0.113.14 ,  ",
            "203.0.113.14",
        ),
        ("quoted", b"\"203.0.113.15\"", "203.0.113.15"),
        (
            "same /64, other host",
            b"2001:db8:0:12::ffff",
            "2001:db8:0:12::1",
        ),
        // Port digits are not range-checked; the address is still clear.
        ("port out of range", b"203.0.113.18:99999", "203.0.113.18"),
        ("obfuscated port", b"203.0.113.20:_p0rt", "203.0.113.20"),
    ];
    for (case, value, ip) in ok {
        let fresh = *case != "same /64, other host";
        assert_keyed_as(&s, case, &[&xff(value)], ip, fresh).await;
    }
    // Two header lines: read as one chain, rightmost entry of the last line.
    assert_keyed_as(
        &s,
        "two lines",
        &[&xff(b"203.0.113.99"), &xff(b"203.0.113.16")],
        "203.0.113.16",
        true,
    )
    .await;
    // A rightmost entry that is not an address stops the walk: the client
    // is the peer, whose bucket is already used.
    let mut commas = b"203.0.113.17".to_vec();
    commas.extend(vec![b','; 64 * 1024]);
    let mut long_chain: Vec<u8> = (0..10_000)
        .flat_map(|i| format!("198.51.{}.{}, ", i / 256 % 256, i % 256).into_bytes())
        .collect();
    long_chain.extend_from_slice(b"garbage");
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("unknown", b"unknown".to_vec()),
        ("obfuscated", b"_hidden".to_vec()),
        ("octet out of range", b"999.1.1.1".to_vec()),
        ("short", b"1.2.3".to_vec()),
        ("hex octets", b"0x7f.0.0.1".to_vec()),
        ("zone", b"fe80::1%eth0".to_vec()),
        ("empty", b"".to_vec()),
        ("only commas", b",,,,".to_vec()),
        ("invalid utf-8", b"203.0.113.19\xff".to_vec()),
        ("10,000 entries, garbage last", long_chain),
        ("a 64 KiB value", vec![b'9'; 64 * 1024]),
    ];
    for (case, value) in &bad {
        assert_keyed_as(&s, case, &[&xff(value)], "127.0.0.1", false).await;
    }
    // Trailing commas are skipped: the rightmost address counts.
    assert_keyed_as(
        &s,
        "64 KiB of commas",
        &[&xff(&commas)],
        "203.0.113.17",
        true,
    )
    .await;
    s.assert_sound("x-forwarded-for").await;
    eprintln!(
        "hostile: {} X-Forwarded-For shapes behind hops(1): right key each time",
        ok.len() + bad.len() + 2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_header_behind_trusted_ranges() {
    let ranges: Vec<Cidr> = ["127.0.0.0/8", "10.0.0.0/8", "2001:db8:ffff::/48"]
        .iter()
        .map(|c| c.parse().expect("cidr"))
        .collect();
    let s = site(
        TrustedProxies::cidrs(ranges).header(ForwardedHeader::Forwarded),
        Server::Roomy,
    )
    .await;
    let fwd = |v: &[u8]| header("forwarded", v);
    assert_eq!(s.status(b"/ip", &[]).await, 200, "the peer's own bucket");
    let ok: &[(&str, &[u8], &str)] = &[
        ("plain", b"for=203.0.113.30", "203.0.113.30"),
        (
            "trusted hops skipped",
            b"for=203.0.113.31;proto=https, for=10.0.0.5, for=\"[2001:db8:ffff::1]\"",
            "203.0.113.31",
        ),
        (
            "client-written left entry ignored",
            b"for=198.51.100.66, for=203.0.113.32, for=10.1.2.3",
            "203.0.113.32",
        ),
        (
            "quoted v6 with port",
            b"for=\"[2001:db8:32::1]:4711\"",
            "2001:db8:32::1",
        ),
        (
            "case and spaces",
            b"For = 203.0.113.33 ; by=10.0.0.1",
            "203.0.113.33",
        ),
        (
            "mapped trusted hop",
            b"for=203.0.113.34, for=\"[::ffff:10.0.0.9]\"",
            "203.0.113.34",
        ),
        (
            "quoted comma",
            b"for=\"203.0.113.35\";x=\"a,b\"",
            "203.0.113.35",
        ),
    ];
    for (case, value, ip) in ok {
        assert_keyed_as(&s, case, &[&fwd(value)], ip, true).await;
    }
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("unknown", b"for=unknown".to_vec()),
        ("obfuscated", b"for=_gazonk".to_vec()),
        ("no for", b"proto=https;by=203.0.113.40".to_vec()),
        ("invalid utf-8", b"for=\xff\xfe".to_vec()),
        ("zone in brackets", b"for=\"[fe80::1%25eth0]\"".to_vec()),
        (
            "thousands of elements, garbage last",
            (0..5_000)
                .flat_map(|i| format!("for=198.51.100.{}, ", i % 256).into_bytes())
                .chain(b"for=garbage".iter().copied())
                .collect(),
        ),
    ];
    for (case, value) in &bad {
        assert_keyed_as(&s, case, &[&fwd(value)], "127.0.0.1", false).await;
    }
    // An unbalanced quote breaks its own element only: the walk stops there,
    // at the view of the trusted hop that wrote it (10.0.0.1).
    let unbalanced = fwd(b"for=\"203.0.113.41, for=10.0.0.1");
    assert_keyed_as(&s, "unbalanced quote", &[&unbalanced], "10.0.0.1", true).await;
    s.assert_sound("forwarded").await;
    eprintln!(
        "hostile: {} Forwarded shapes behind trusted ranges: right key each time",
        ok.len() + bad.len() + 1
    );
}
