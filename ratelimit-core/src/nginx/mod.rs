//! nginx-compatible `limit_req` / `limit_conn`: zones, arithmetic and the directive parser.
