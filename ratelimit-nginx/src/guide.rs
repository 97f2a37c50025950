//! The guide's chapter on nginx configurations, rendered from
//! `docs/migrating-from-nginx.md`.
//!
//! Built only by rustdoc (and its doctests): a normal build never reads
//! the files. The index of the guide is
//! [`ratelimit_core::guide`](../../ratelimit_core/guide/index.html).

// Link definitions first: they win over the file's own relative links.
#[doc = "[rules]: ../../../ratelimit_core/guide/rules/index.html"]
#[doc = "[observability]: ../../../ratelimit_core/guide/observability/index.html"]
#[doc = "[valkey]: ../../../ratelimit_valkey/guide/valkey/index.html"]
#[doc = "[security]: ../../../ratelimit_tower/guide/security/index.html"]
#[doc = "[trusted_proxies]: ../../../ratelimit_tower/proxy/struct.TrustedProxies.html"]
#[doc = "[config_parse]: crate::NginxConfig::parse"]
#[doc = "[level_parse]: crate::Level::parse"]
#[doc = "[zones_limit_req]: crate::Zones::limit_req"]
#[doc = "[zones_limit_conn]: crate::Zones::limit_conn"]
#[doc = "[registry]: crate::ZoneRegistry"]
#[doc = "[inherit]: crate::Level::inherit"]
#[doc = "[client_ip]: ratelimit_core::ClientIp"]
#[doc = include_str!("../docs/migrating-from-nginx.md")]
pub mod migrating_from_nginx {}
