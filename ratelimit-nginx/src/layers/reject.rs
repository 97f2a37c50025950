//! The response of a refused request, and the status extensions.
//!
//! A refused request gets the configured status and an empty body. Its
//! response carries the [`LimitRejected`] record (the access log's reason)
//! and the `$limit_req_status` / `$limit_conn_status` extension.

use crate::{LimitConnStatus, LimitRejected, LimitReqStatus};
use http::{Extensions, Response, StatusCode};

/// The response of a refused request, with an empty (default) body.
pub(crate) fn rejection<B: Default>(rejected: &LimitRejected) -> Response<B> {
    let mut response = Response::new(B::default());
    *response.status_mut() =
        StatusCode::from_u16(rejected.status()).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    response.extensions_mut().insert(rejected.clone());
    response
}

/// Records `status`, keeping the worst when another layer recorded one.
pub(crate) fn record_req_status(extensions: &mut Extensions, status: Option<LimitReqStatus>) {
    if let Some(status) = status {
        let worst = extensions
            .get::<LimitReqStatus>()
            .map_or(status, |s| s.worst(status));
        extensions.insert(worst);
    }
}

/// Records `status`, keeping the worst when another layer recorded one.
pub(crate) fn record_conn_status(extensions: &mut Extensions, status: Option<LimitConnStatus>) {
    if let Some(status) = status {
        let worst = extensions
            .get::<LimitConnStatus>()
            .map_or(status, |s| s.worst(status));
        extensions.insert(worst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_status_is_kept_across_layers() {
        let mut ext = Extensions::new();
        record_req_status(&mut ext, None);
        assert!(ext.get::<LimitReqStatus>().is_none());
        record_req_status(&mut ext, Some(LimitReqStatus::Delayed));
        record_req_status(&mut ext, Some(LimitReqStatus::Passed));
        assert_eq!(ext.get::<LimitReqStatus>(), Some(&LimitReqStatus::Delayed));
        record_conn_status(&mut ext, Some(LimitConnStatus::RejectedDryRun));
        record_conn_status(&mut ext, Some(LimitConnStatus::Passed));
        assert_eq!(
            ext.get::<LimitConnStatus>(),
            Some(&LimitConnStatus::RejectedDryRun)
        );
    }
}
