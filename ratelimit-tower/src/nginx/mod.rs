//! Tower layers for nginx-compatible `limit_req` and `limit_conn`.
