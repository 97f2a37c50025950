//! Any request the rule engine reads is a key source: a key renders the
//! same from the tower layer's borrowed view of an `http::Request`, from
//! the core's owned `RequestAttrs` holding the same request, and through
//! `&dyn RequestView`.

use ratelimit_core::{ClientIp, RequestAttrs, RequestView};
use ratelimit_nginx::KeyTemplate;
use ratelimit_tower::RequestExtractor;

#[test]
fn a_key_renders_alike_from_owned_attributes_and_the_borrowed_view() {
    let req = http::Request::builder()
        .method("POST")
        .uri("/a/../Wp-Login.php?x=1")
        .header("host", "Shop.Example.com.:8443")
        .header("x-tenant", "acme")
        .header("x-tenant", "other")
        .extension(ClientIp("203.0.113.9".parse().expect("ip")))
        .body(())
        .expect("request");
    let view = RequestExtractor::new().view(&req);
    // The same request as the view reads it: the host normalized, the
    // path as sent.
    let owned = RequestAttrs::new("203.0.113.9".parse().expect("ip"))
        .with_method("POST")
        .with_host("shop.example.com")
        .with_path("/a/../Wp-Login.php")
        .with_query("x=1")
        .with_header("x-tenant", "acme")
        .with_header("x-tenant", "other");
    let key =
        KeyTemplate::parse("$client_ip|$remote_addr|$host|$method|$path|$http_x_tenant|$site")
            .expect("valid");
    let want = "203.0.113.9|203.0.113.9|shop.example.com|POST|/Wp-Login.php|acme|";
    assert_eq!(String::from_utf8_lossy(&key.render(&owned)), want);
    assert_eq!(String::from_utf8_lossy(&key.render(&view)), want);
    let dynamic: &dyn RequestView = &view;
    assert_eq!(String::from_utf8_lossy(&key.render(&dynamic)), want);
}
