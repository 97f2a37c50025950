//! The request view: owned attributes read the same through it, and a
//! visitor's break stops the walk.

use super::*;

fn via_view(v: &dyn RequestView, name: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    v.for_each_header_value(name, &mut |b| {
        out.push(b.to_vec());
        ControlFlow::Continue(())
    });
    out
}

#[test]
fn the_owned_attributes_read_the_same_through_the_view() {
    let r = RequestAttrs::new("192.0.2.1".parse().unwrap())
        .with_query("a=%41&a=2")
        .with_header("Cookie", "x=1")
        .with_header("cookie", "sid=s2")
        .with_header("x-k", "v")
        .with_app_value("t", "acme")
        .with_cost(3);
    let v: &dyn RequestView = &r;
    assert_eq!(v.query_arg("a").as_deref(), Some("A"));
    assert_eq!(v.query_arg_bytes("a").as_deref(), Some(&b"A"[..]));
    assert_eq!(v.cookie("sid"), Some(&b"s2"[..]));
    assert_eq!(v.header("x-k"), Some(&b"v"[..]));
    assert_eq!(via_view(v, "cookie"), [b"x=1".to_vec(), b"sid=s2".to_vec()]);
    assert_eq!(v.app_value("t"), Some("acme"));
    assert_eq!(v.cost(), Some(3));
    assert_eq!(v.jwt_claim("sub"), None);
    assert_eq!(v.viewer(ViewerFact::Country), None);
}

#[test]
fn breaking_stops_the_walk() {
    let r = RequestAttrs::new("192.0.2.1".parse().unwrap())
        .with_header("cookie", "a=1")
        .with_header("cookie", "a=2");
    let mut seen = 0;
    r.for_each_header_value("cookie", &mut |_| {
        seen += 1;
        ControlFlow::Break(())
    });
    assert_eq!(seen, 1);
}
