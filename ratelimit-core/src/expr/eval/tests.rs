use super::*;
use crate::expr::ast::Subject;

use crate::RequestAttrs;

fn req() -> RequestAttrs {
    RequestAttrs::new("192.0.2.1".parse().unwrap())
}

fn test(field: StrField, op: StrOp) -> Node {
    Node::Str(StrTest {
        subject: Subject {
            field,
            lower: false,
        },
        op,
    })
}

#[test]
fn simple_fields_are_borrowed_not_copied() {
    let r = req().with_path("/a").with_header("x-k", "v");
    assert!(matches!(
        field_value(&StrField::Path, &r, false),
        Cow::Borrowed("/a")
    ));
    let header = StrField::Header("x-k".into());
    assert!(matches!(
        field_value(&header, &r, false),
        Cow::Borrowed("v")
    ));
    assert!(matches!(
        lowered(Cow::Borrowed("already lower")),
        Cow::Borrowed(_)
    ));
}

#[test]
fn grpc_names_split_a_method_path_and_nothing_else() {
    for (path, want) in [
        ("/shop.v1.Orders/Create", ("shop.v1.Orders", "Create")),
        (
            "/grpc.health.v1.Health/Check",
            ("grpc.health.v1.Health", "Check"),
        ),
        ("/a/b/c", ("", "")),
        ("/a/", ("", "")),
        ("//b", ("", "")),
        ("/login", ("", "")),
        ("", ("", "")),
        ("a/b", ("", "")),
    ] {
        assert_eq!(grpc_names(path), want, "{path:?}");
    }
    let r = req().with_path("/shop.v1.Orders/Create");
    let service = test(StrField::GrpcService, StrOp::Eq("shop.v1.Orders".into()));
    let method = test(StrField::GrpcMethod, StrOp::Eq("Create".into()));
    assert!(eval(&service, &r, false) && eval(&method, &r, false));
}

#[test]
fn lowered_handles_non_ascii_upper_case() {
    assert_eq!(lowered(Cow::Borrowed("ÉCOLE.Example")), "école.example");
}

#[test]
fn missing_header_is_the_empty_string() {
    let field = StrField::Header("x-missing".into());
    assert!(eval(
        &test(field.clone(), StrOp::Eq(String::new())),
        &req(),
        false
    ));
    assert!(eval(&test(field, StrOp::Ne("x".into())), &req(), false));
}

#[test]
fn invalid_utf8_header_is_compared_lossily() {
    let r = req().with_header("x-bin", b"a\xffb");
    let op = StrOp::Eq("a\u{fffd}b".into());
    assert!(eval(&test(StrField::Header("x-bin".into()), op), &r, false));
}

#[test]
fn several_cookie_headers_are_joined_with_semicolon_space() {
    let r = req()
        .with_header("Cookie", "a=1")
        .with_header("Cookie", "b=2");
    assert_eq!(cookie_text(&r), "a=1; b=2");
    assert_eq!(cookie_text(&req()), "");
    assert!(matches!(
        cookie_text(&req().with_header("cookie", "a=1")),
        Cow::Borrowed("a=1")
    ));
}

#[test]
fn empty_and_or_follow_the_identities() {
    assert!(eval(&Node::And(vec![]), &req(), false));
    assert!(!eval(&Node::Or(vec![]), &req(), false));
}
