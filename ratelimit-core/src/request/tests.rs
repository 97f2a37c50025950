//! Request attributes: repeated query arguments and cookies, raw query
//! bytes, percent decoding.

use super::*;

fn req() -> RequestAttrs {
    RequestAttrs::new("192.0.2.1".parse().unwrap())
}

#[test]
fn first_repeated_query_argument_wins() {
    let r = req().with_query("a=1&b=x%20y&a=2&c=%zz&d");
    assert_eq!(r.query_arg("a").as_deref(), Some("1"));
    assert_eq!(r.query_arg("b").as_deref(), Some("x y"));
    assert_eq!(r.query_arg("c").as_deref(), Some("%zz"));
    assert_eq!(r.query_arg("d").as_deref(), Some(""));
    assert_eq!(r.query_arg("e"), None);
}

#[test]
fn query_bytes_keep_invalid_utf8_apart() {
    let a = req().with_query("id=%80");
    let b = req().with_query("id=%81");
    assert_eq!(
        a.query_arg("id"),
        b.query_arg("id"),
        "lossy text: both U+FFFD"
    );
    assert_ne!(a.query_arg_bytes("id"), b.query_arg_bytes("id"));
    assert_eq!(a.query_arg_bytes("id").as_deref(), Some(&[0x80u8][..]));
}

#[test]
fn first_cookie_across_headers_wins() {
    let r = req()
        .with_header("Cookie", "a=1; sid = s1 ")
        .with_header("cookie", "sid=s2");
    assert_eq!(r.cookie("sid"), Some(&b"s1"[..]));
    assert_eq!(r.cookie("a"), Some(&b"1"[..]));
    assert_eq!(r.cookie("nope"), None);
}

#[test]
fn percent_decode_handles_truncated_escapes() {
    assert_eq!(percent_decode("%4"), "%4");
    assert_eq!(percent_decode("%"), "%");
    assert_eq!(percent_decode("%41%42"), "AB");
    assert_eq!(percent_decode("%ff"), "\u{fffd}");
}
