//! How the layers find the client's address with no configuration:
//! `ClientIp` (as `ratelimit_tower::SetClientIpLayer` inserts it), axum's
//! `ConnectInfo<SocketAddr>`, a plain `SocketAddr`. Without any, a zone keyed
//! on the address answers 500 naming the fix instead of never limiting,
//! unless the layer opts into one shared bucket.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use http::{Request, Response, StatusCode};
use ratelimit_core::ClientIp;
use ratelimit_nginx::{Level, LimitConnLayer, LimitReqLayer, NginxConfig, ZoneRegistry};
use ratelimit_tower::SetClientIpLayer;
use tower::{service_fn, Layer, Service, ServiceExt};

const ZONES: &str = "limit_req_zone $client_ip zone=one:1m rate=1r/m;\n\
                     limit_req_zone $http_x_tenant zone=tenant:1m rate=1r/m;\n\
                     limit_conn_zone $remote_addr zone=addr:1m;";

fn req_layer(level: &str) -> LimitReqLayer {
    let zones = ZoneRegistry::new()
        .load(&NginxConfig::parse(ZONES).expect("config"))
        .expect("zones");
    LimitReqLayer::new(
        zones
            .limit_req(&Level::parse(level).expect("level"))
            .expect("policy"),
    )
}

fn conn_layer() -> LimitConnLayer {
    let zones = ZoneRegistry::new()
        .load(&NginxConfig::parse(ZONES).expect("config"))
        .expect("zones");
    LimitConnLayer::new(
        zones
            .limit_conn(&Level::parse("limit_conn addr 1;").expect("level"))
            .expect("policy"),
    )
}

fn app() -> impl Service<Request<()>, Response = Response<String>, Error = Infallible> + Clone {
    service_fn(|_req: Request<()>| async { Ok(Response::new(String::from("ok"))) })
}

async fn status<S>(svc: &S, req: Request<()>) -> (StatusCode, String)
where
    S: Service<Request<()>, Response = Response<String>, Error = Infallible> + Clone,
{
    let res = svc.clone().oneshot(req).await.expect("infallible");
    (res.status(), res.into_body())
}

fn with<T: Clone + Send + Sync + 'static>(ext: T) -> Request<()> {
    let mut req = Request::new(());
    req.extensions_mut().insert(ext);
    req
}

fn assert_names_the_fix(body: &str) {
    assert!(
        body.contains("into_make_service_with_connect_info::<SocketAddr>()"),
        "{body}"
    );
    assert!(body.contains("SetClientIpLayer"), "{body}");
    assert!(body.contains("shared_bucket_without_peer()"), "{body}");
}

#[tokio::test]
async fn limit_req_without_an_address_answers_500_naming_the_fix() {
    let svc = req_layer("limit_req zone=one;").layer(app());
    for _ in 0..2 {
        let (code, body) = status(&svc, Request::new(())).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_names_the_fix(&body);
    }
}

#[tokio::test]
async fn limit_conn_without_an_address_answers_500_naming_the_fix() {
    let svc = conn_layer().layer(app());
    let res = svc
        .clone()
        .oneshot(Request::new(()))
        .await
        .expect("infallible");
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(!res.body().holds_permit());
    assert_names_the_fix(&res.into_body().into_inner());
}

#[tokio::test]
async fn a_zone_that_does_not_key_on_the_address_needs_none() {
    let svc = req_layer("limit_req zone=tenant;").layer(app());
    let tenant = || {
        Request::builder()
            .header("x-tenant", "acme")
            .body(())
            .expect("request")
    };
    assert_eq!(status(&svc, tenant()).await.0, StatusCode::OK);
    assert_eq!(
        status(&svc, tenant()).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

#[tokio::test]
async fn the_opt_in_limits_requests_without_an_address_as_one_bucket() {
    let svc = req_layer("limit_req zone=one;")
        .shared_bucket_without_peer()
        .layer(app());
    assert_eq!(status(&svc, Request::new(())).await.0, StatusCode::OK);
    // Another client without an address: the same bucket.
    assert_eq!(
        status(&svc, Request::new(())).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    let other = with(ClientIp("192.0.2.8".parse().expect("ip")));
    assert_eq!(status(&svc, other).await.0, StatusCode::OK);
}

#[tokio::test]
async fn connect_info_is_read_with_no_configuration() {
    let svc = req_layer("limit_req zone=one;").layer(app());
    let from = |peer: &str| with(ConnectInfo(peer.parse::<SocketAddr>().expect("addr")));
    assert_eq!(status(&svc, from("192.0.2.1:5000")).await.0, StatusCode::OK);
    // Another port of the same address: the same bucket.
    assert_eq!(
        status(&svc, from("192.0.2.1:5001")).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(status(&svc, from("192.0.2.2:5000")).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_plain_socket_addr_is_read_with_no_configuration() {
    let svc = conn_layer().layer(app());
    let from = || with("192.0.2.3:5000".parse::<SocketAddr>().expect("addr"));
    let first = svc.clone().oneshot(from()).await.expect("infallible");
    assert_eq!(first.status(), StatusCode::OK);
    let second = svc.clone().oneshot(from()).await.expect("infallible");
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn set_client_ip_layer_from_ratelimit_tower_feeds_the_nginx_layers() {
    let peer = "192.0.2.4".parse().expect("ip");
    let svc = SetClientIpLayer::new(peer).layer(req_layer("limit_req zone=one;").layer(app()));
    assert_eq!(status(&svc, Request::new(())).await.0, StatusCode::OK);
    assert_eq!(
        status(&svc, Request::new(())).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    // $remote_addr falls back to the ClientIp when the server put no peer.
    let conns = SetClientIpLayer::new(peer).layer(conn_layer().layer(app()));
    let held = conns.clone().oneshot(Request::new(())).await.expect("ok");
    assert_eq!(held.status(), StatusCode::OK);
    let refused = conns.clone().oneshot(Request::new(())).await.expect("ok");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn client_ip_wins_over_the_peer_for_client_ip_keys() {
    let svc = req_layer("limit_req zone=one;").layer(app());
    let proxied = |client: &str| {
        let mut req = with(ConnectInfo(
            "10.0.0.1:443".parse::<SocketAddr>().expect("addr"),
        ));
        req.extensions_mut()
            .insert(ClientIp(client.parse().expect("ip")));
        req
    };
    assert_eq!(status(&svc, proxied("203.0.113.1")).await.0, StatusCode::OK);
    // Same proxy, another client: its own bucket.
    assert_eq!(status(&svc, proxied("203.0.113.2")).await.0, StatusCode::OK);
    assert_eq!(
        status(&svc, proxied("203.0.113.1")).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
}
