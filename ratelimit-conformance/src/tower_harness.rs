//! Plays requests through the tower layer: an `http::Request` into
//! `RateLimit<S>` in front of an upstream that answers the case's
//! `upstream_status` and reports its `response_cost` as a
//! [`ResponseCost`] extension. The layer awaits the charge before the body
//! ends (`charge_before_end`), and the harness reads every body to its end,
//! so the next step sees the charge on every backend.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderName, Request, Response};
use http_body_util::BodyExt;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};
use ratelimit_tower::{
    ClientIp, RateLimitLayer, ResponseCost, VerifiedClaims, ViewerHeaders, WouldLimit,
};
use tower::{Layer, ServiceExt};

use crate::harness::{pick, publish_all, set_up, Harness, Reply, Toggle};

/// What the upstream answers, carried on the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UpstreamStatus(pub(crate) u16);

/// What the upstream reports its response cost, carried on the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UpstreamCost(pub(crate) u64);

const COUNTRY: &str = "x-viewer-country";
const ASNUM: &str = "x-viewer-asnum";
const JA4: &str = "x-viewer-ja4";
const LOCALE: &str = "x-viewer-locale";

/// The viewer headers the harnesses send the case's viewer facts in.
pub(crate) fn viewer_headers() -> ViewerHeaders {
    ViewerHeaders::new()
        .country(HeaderName::from_static(COUNTRY))
        .asnum(HeaderName::from_static(ASNUM))
        .ja4(HeaderName::from_static(JA4))
        .locale(HeaderName::from_static(LOCALE))
}

/// Plays requests through [`RateLimitLayer`].
pub struct TowerHarness {
    layer: RateLimitLayer,
    layers: Vec<RateLimitLayer>,
    limiters: Vec<Limiter>,
    clock: ManualClock,
    toggle: Option<Toggle>,
}

impl std::fmt::Debug for TowerHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TowerHarness").finish_non_exhaustive()
    }
}

impl TowerHarness {
    /// A harness around `limiter`, whose clock is `clock`.
    pub fn new(limiter: Limiter, clock: ManualClock, toggle: Option<Toggle>) -> Self {
        Self::fleet(vec![limiter], clock, toggle)
    }

    /// A harness around several instances' limiters (at least one), all
    /// on `clock`; requests go to the first until a step names another.
    pub fn fleet(limiters: Vec<Limiter>, clock: ManualClock, toggle: Option<Toggle>) -> Self {
        let viewer = viewer_headers();
        let layers: Vec<RateLimitLayer> = limiters
            .iter()
            .map(|l| {
                RateLimitLayer::new(l.clone())
                    .viewer_headers(viewer.clone())
                    .charge_before_end(true)
            })
            .collect();
        Self {
            layer: layers[0].clone(),
            layers,
            limiters,
            clock,
            toggle,
        }
    }
}

/// The case's request as an `http::Request` carrying the client address,
/// the verified claims and the upstream's answer as extensions.
pub(crate) fn to_http(
    req: &RequestAttrs,
    upstream: u16,
    cost: u64,
) -> Result<Request<Bytes>, http::Error> {
    let uri = if req.query.is_empty() {
        req.path.clone()
    } else {
        format!("{}?{}", req.path, req.query)
    };
    let mut b = Request::builder()
        .method(req.method.as_str())
        .uri(uri)
        .header(http::header::HOST, req.host.as_str());
    for (n, v) in &req.headers {
        b = b.header(n.as_str(), v.as_slice());
    }
    for (name, v) in [
        (COUNTRY, &req.country),
        (ASNUM, &req.asnum),
        (JA4, &req.ja4),
        (LOCALE, &req.locale),
    ] {
        if let Some(v) = v {
            b = b.header(name, v.as_str());
        }
    }
    let mut r = b.body(Bytes::new())?;
    r.extensions_mut().insert(ClientIp(req.client_ip));
    r.extensions_mut().insert(UpstreamStatus(upstream));
    r.extensions_mut().insert(UpstreamCost(cost));
    if let Some(claims) = &req.jwt_claims {
        r.extensions_mut().insert(VerifiedClaims(claims.clone()));
    }
    Ok(r)
}

impl Harness for TowerHarness {
    async fn request(
        &mut self,
        at_ms: u64,
        req: RequestAttrs,
        upstream_status: u16,
        response_cost: u64,
    ) -> Reply {
        self.clock.set_ms(at_ms);
        let upstream = tower::service_fn(|r: Request<Bytes>| async move {
            let status = r.extensions().get::<UpstreamStatus>().map_or(200, |s| s.0);
            let cost = r.extensions().get::<UpstreamCost>().map_or(0, |c| c.0);
            let res = Response::builder()
                .status(status)
                .extension(ResponseCost(cost))
                .body(String::from("upstream"));
            Ok::<_, Infallible>(res.unwrap_or_default())
        });
        let svc = self.layer.layer(upstream);
        let http_req = match to_http(&req, upstream_status, response_cost) {
            Ok(r) => r,
            Err(e) => {
                return Reply {
                    status: 0,
                    headers: vec![("x-harness-error".into(), e.to_string())],
                    ..Reply::default()
                }
            }
        };
        let Ok(res) = svc.oneshot(http_req).await;
        let (parts, body) = res.into_parts();
        // Read to the end: the charge is made before the body ends.
        let _ = body.collect().await;
        let res = Response::from_parts(parts, ());
        Reply {
            status: res.status().as_u16(),
            headers: res
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            would_limit: res
                .extensions()
                .get::<WouldLimit>()
                .map(|w| w.0.clone())
                .unwrap_or_default(),
        }
    }

    fn set_backend_up(&mut self, up: bool) -> Result<(), String> {
        set_up(&mut self.toggle, up)
    }

    fn publish(&mut self, rules: RuleSet) -> Result<(), String> {
        publish_all(&self.limiters, &rules)
    }

    fn use_instance(&mut self, i: usize) -> Result<(), String> {
        self.layer = pick(&self.layers, i)?;
        Ok(())
    }
}
