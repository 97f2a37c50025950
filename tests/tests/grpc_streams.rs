//! Streaming gRPC calls through the layer over loopback TCP: a refused
//! server stream, client stream or bidirectional stream fails at the call
//! (a trailers-only answer), not at its first message; per-message limits
//! inside a stream follow the guide's recipe (the keyed API).

use http::uri::PathAndQuery;
use ratelimit_tests::support::grpc::*;
use ratelimit_tower::RateLimitLayer;
use tonic::codegen::tokio_stream::{self, StreamExt};
use tonic::{Code, Request};
use tonic_health::pb::health_client::HealthClient;

/// One call per client and minute; the keyed rule of `test.Extra/Chat`
/// takes three messages per client and minute.
const ONE_CALL: &str = r#"[{"id": "per-ip", "expression": "true",
    "algorithm": "token_bucket", "limit": 1, "burst": 1, "period": "1m", "key": ["ip"]},
  {"id": "chat-messages", "expression": "false",
    "algorithm": "token_bucket", "limit": 3, "burst": 3, "period": "1m", "key": ["ip"]}]"#;

/// A server whose one call per client the first health check takes.
async fn spent() -> tonic::transport::Channel {
    let layer = RateLimitLayer::from_json_str(ONE_CALL).expect("rules");
    let ch = channel(serve_grpc(layer).await).await;
    let mut health = HealthClient::new(ch.clone());
    health.check(check_request("")).await.expect("the one call");
    ch
}

#[tokio::test]
async fn an_allowed_server_stream_streams() {
    let layer = RateLimitLayer::from_json_str(ONE_CALL).expect("rules");
    let mut health = HealthClient::new(channel(serve_grpc(layer).await).await);
    let mut stream = health
        .watch(check_request(""))
        .await
        .expect("allowed")
        .into_inner();
    let first = stream
        .message()
        .await
        .expect("a message")
        .expect("not ended");
    assert_eq!(first.status, 1, "SERVING");
}

#[tokio::test]
async fn a_refused_server_stream_fails_at_the_call() {
    let mut health = HealthClient::new(spent().await);
    let err = health.watch(check_request("")).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
}

#[tokio::test]
async fn a_refused_client_stream_fails_at_the_call() {
    let ch = spent().await;
    let messages = stream_of((0..3).map(|i| check_request(&i.to_string())));
    let path = PathAndQuery::from_static("/test.Extra/Chat");
    let res = client(&ch)
        .await
        .client_streaming(Request::new(messages), path, Codec::default())
        .await;
    assert_eq!(res.unwrap_err().code(), Code::ResourceExhausted);
}

#[tokio::test]
async fn a_refused_bidirectional_stream_fails_at_the_call() {
    let ch = spent().await;
    // A stream that never ends: the answer cannot wait for it. One message,
    // then none: an endless run of small messages sent without a pause
    // would trip the server's HTTP/2 guard against floods of small DATA
    // frames (h2 answers GOAWAY and closes the connection), and a client
    // busy writing can read that as a transport error before it reads the
    // answer already sent.
    let one = stream_of(std::iter::once(check_request("")));
    let messages = one.chain(tokio_stream::pending());
    let path = PathAndQuery::from_static("/test.Extra/Talk");
    let mut client = client(&ch).await;
    let call = client.streaming(Request::new(messages), path, Codec::default());
    let res = tokio::time::timeout(std::time::Duration::from_secs(10), call)
        .await
        .expect("answered at the call, not after a stream that never ends");
    let err = res.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
}

#[tokio::test]
async fn messages_inside_a_stream_are_limited_one_by_one() {
    let rules = r#"[{"id": "per-ip", "expression": "true",
        "algorithm": "token_bucket", "limit": 100, "burst": 100, "period": "1m", "key": ["ip"]},
      {"id": "chat-messages", "expression": "false",
        "algorithm": "token_bucket", "limit": 3, "burst": 3, "period": "1m", "key": ["ip"]}]"#;
    let layer = RateLimitLayer::from_json_str(rules).expect("rules");
    let ch = channel(serve_grpc(layer).await).await;
    assert_eq!(chat_call(&ch, 2).await.expect("two messages"), 2);
    let err = chat_call(&ch, 5).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    assert!(
        err.message().starts_with("message 2 over the limit"),
        "{}",
        err.message()
    );
    // The next stream is refused at its first message, its call allowed.
    let err = chat_call(&ch, 1).await.unwrap_err();
    assert!(
        err.message().starts_with("message 1 over the limit"),
        "{}",
        err.message()
    );
}
