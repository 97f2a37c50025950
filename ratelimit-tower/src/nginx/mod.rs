//! Tower layers for nginx-compatible `limit_req` and `limit_conn`.
//!
//! [`LimitReqLayer`] and [`LimitConnLayer`] apply the policies of
//! [`ratelimit_core::nginx`] to any tower `Service` over `http` requests,
//! whatever its bodies. Put them on a route (axum's `route_layer`) as nginx
//! puts the directives in a `location`, and in front of everything else, so
//! that a refused request never reaches the application.
//!
//! * `$limit_req_status` and `$limit_conn_status` are the
//!   [`LimitReqStatus`](ratelimit_core::nginx::LimitReqStatus) and
//!   [`LimitConnStatus`](ratelimit_core::nginx::LimitConnStatus) extensions
//!   of the request (for the inner service) and of the response; a refused
//!   response also carries [`LimitRejected`](ratelimit_core::nginx::LimitRejected).
//! * A delayed request sleeps inside the response future with
//!   `tokio::time::sleep`: it blocks nothing else, and a timeout around the
//!   service counts the wait.
//! * limit_conn's count lives in the [`ConnBody`] of the response and is
//!   given back once: at the end of the body, or when it is dropped.
//!
//! nginx applies only the merged list of the location a request ends in;
//! stacked layers each apply their own. Merge the levels with
//! [`Level::inherit`](ratelimit_core::nginx::Level::inherit) (what
//! [`Zones::limit_req`](ratelimit_core::nginx::Zones::limit_req) does with
//! the top level) and put one layer of each kind on a route.
//!
//! # Examples
//!
//! ```
//! use axum::{routing::post, Router};
//! use ratelimit_core::nginx::{Level, NginxConfig, ZoneRegistry};
//! use ratelimit_tower::nginx::LimitReqLayer;
//!
//! # fn main() -> Result<(), ratelimit_core::nginx::ConfigError> {
//! let config = NginxConfig::parse("limit_req_zone $client_ip zone=perip:10m rate=10r/s;")?;
//! let zones = ZoneRegistry::global().load(&config)?;
//! let login = zones.limit_req(&Level::parse("limit_req zone=perip burst=2 nodelay; limit_req_status 429;")?)?;
//! let app: Router = Router::new()
//!     .route("/wp-login.php", post(|| async { "checked" }))
//!     .route_layer(LimitReqLayer::new(login).with_peer_addr(|ext| {
//!         ext.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0)
//!     }));
//! # let _ = app;
//! # Ok(())
//! # }
//! ```

mod body;
mod clock;
mod conn_future;
mod conn_layer;
mod reject;
mod req_future;
mod req_layer;
mod source;

pub use body::ConnBody;
pub use clock::TokioClock;
pub use conn_future::ConnFuture;
pub use conn_layer::{LimitConn, LimitConnLayer};
pub use req_future::ResponseFuture;
pub use req_layer::{LimitReq, LimitReqLayer};
pub use source::{default_peer_addr, ClientIp, PeerAddr, PeerAddrFn, SiteName};
