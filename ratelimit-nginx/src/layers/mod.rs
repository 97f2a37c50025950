//! Tower layers for nginx-compatible `limit_req` and `limit_conn` (feature
//! `tower`); see the crate documentation.

mod body;
mod conn_future;
mod conn_layer;
mod reject;
mod req_future;
mod req_layer;
mod scaffold;
mod settings;
mod source;

pub use body::ConnBody;
pub use conn_future::ConnFuture;
pub use conn_layer::{LimitConn, LimitConnLayer};
pub use req_future::ReqFuture;
pub use req_layer::{LimitReq, LimitReqLayer};
pub use source::SiteName;
