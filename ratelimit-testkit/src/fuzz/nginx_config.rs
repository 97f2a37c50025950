//! Target `nginx_config`: the nginx `limit_req` / `limit_conn` parser and
//! zones of `ratelimit-nginx`.

use std::net::{IpAddr, Ipv4Addr};

use ratelimit_core::RequestAttrs;
use ratelimit_nginx::{KeyTemplate, Level, NginxConfig, Rate, ZoneKind, ZoneRegistry, ZoneSize};

use super::T0_MS;

/// Zones are loaded (memory reserved) only up to this many bytes in all, so
/// that a `zone=a:4g` input does not trip the fuzzer's malloc limit.
pub const MAX_LOADED_ZONE_BYTES: u64 = 1 << 20;

/// Target `nginx_config`: [`NginxConfig::parse`] and [`Level::parse`] on the
/// input (UTF-8 only). Errors must display and, since the input is text,
/// name a line and a column. A configuration that loads is checked against
/// the level, its zones' sizes, rates and keys must print back to what
/// parses to the same value, and when its zones are small it is loaded and
/// one request is checked and counted.
pub fn nginx_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = NginxConfig::parse(text);
    let level = Level::parse(text);
    for err in [config.as_ref().err(), level.as_ref().err()]
        .into_iter()
        .flatten()
    {
        let shown = err.to_string();
        assert!(shown.ends_with(err.message()), "{shown:?}");
        assert!(err.line().is_some() && err.column().is_some(), "{shown:?}");
        assert!(
            err.line() >= Some(1) && err.column() >= Some(1),
            "{shown:?}"
        );
    }
    let Ok(config) = config else {
        return;
    };
    let mut total: u64 = 0;
    for zone in config.zones() {
        let size = zone.size();
        assert_eq!(ZoneSize::parse(&size.to_string()).ok(), Some(size));
        let key = zone.key();
        assert_eq!(KeyTemplate::parse(key.as_str()).as_ref(), Ok(key));
        if let ZoneKind::Req(rate) = zone.kind() {
            assert_eq!(Rate::parse(&rate.to_string()).ok(), Some(rate));
        }
        assert!(config.zone(zone.name()).is_some());
        total = total.saturating_add(size.bytes());
    }
    let level = match level {
        Ok(level) if config.check_level(&level).is_ok() => level,
        _ => Level::default(),
    };
    if total > MAX_LOADED_ZONE_BYTES {
        return;
    }
    let Ok(zones) = ZoneRegistry::new().load(&config) else {
        return;
    };
    let req = RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)))
        .with_path("/wp-login.php")
        .with_header("x-tenant", "acme");
    if let Ok(policy) = zones.limit_req(&level) {
        for now in [T0_MS, T0_MS, T0_MS + 1, T0_MS + 60_000] {
            let d = policy.check(&req, now);
            let _ = (d.status(), d.delay(), d.rejected().map(|r| r.status()));
        }
    }
    if let Ok(policy) = zones.limit_conn(&level) {
        let first = policy.acquire(&req);
        let second = policy.acquire(&req);
        let _ = (first.status(), second.rejected().map(|r| r.status()));
        drop(second.into_permit());
        first.into_permit().release();
    }
}

/// The nginx path and host normalizers on `req` (part of `request_keys`).
pub(crate) fn normalize(req: &RequestAttrs) {
    let _ = ratelimit_core::normalize_path(req.path.as_bytes());
    let _ = ratelimit_core::normalize_host(&req.host);
}
