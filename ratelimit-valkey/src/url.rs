//! Valkey URLs: `valkey://` and `valkeys://` are `redis://` and `rediss://`.

use crate::Error;

/// Maps `valkey(s)://` to `redis(s)://` and checks the scheme.
pub(crate) fn normalize_url(url: &str) -> Result<String, Error> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| Error::InvalidUrl {
        url: url.into(),
        reason: "no scheme".into(),
    })?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "redis" | "valkey" => "redis",
        "rediss" | "valkeys" if cfg!(feature = "tls") => "rediss",
        "rediss" | "valkeys" => return Err(Error::TlsDisabled(url.into())),
        other => {
            return Err(Error::InvalidUrl {
                url: url.into(),
                reason: format!("unknown scheme {other:?}"),
            })
        }
    };
    if rest.is_empty() {
        return Err(Error::InvalidUrl {
            url: url.into(),
            reason: "no host".into(),
        });
    }
    Ok(format!("{scheme}://{rest}"))
}

/// `url` with its `host:port` replaced by `addr`.
pub(crate) fn with_addr(url: &str, addr: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("redis", url));
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let userinfo = authority.rsplit_once('@').map(|(u, _)| u);
    match userinfo {
        Some(u) => format!("{scheme}://{u}@{addr}{path}"),
        None => format!("{scheme}://{addr}{path}"),
    }
}

/// `host:port`, an IPv6 address in brackets (`[::1]:7000`): Valkey
/// writes a node's address without them (`MOVED 3999 ::1:7000`,
/// `CLUSTER SLOTS`), and a URL needs them.
pub(crate) fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `host:port` of a normalized URL.
pub(crate) fn addr_of(url: &str) -> Result<String, Error> {
    let info =
        redis::IntoConnectionInfo::into_connection_info(url).map_err(|e| Error::InvalidUrl {
            url: url.into(),
            reason: e.to_string(),
        })?;
    match info.addr() {
        redis::ConnectionAddr::Tcp(h, p) => Ok(host_port(h, *p)),
        redis::ConnectionAddr::TcpTls { host, port, .. } => Ok(host_port(host, *port)),
        _ => Err(Error::InvalidUrl {
            url: url.into(),
            reason: "cluster nodes must be TCP addresses".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valkey_schemes_map_to_redis() {
        assert_eq!(
            normalize_url("valkey://127.0.0.1:6379/0").ok().as_deref(),
            Some("redis://127.0.0.1:6379/0")
        );
        assert_eq!(
            normalize_url("redis://h:1").ok().as_deref(),
            Some("redis://h:1")
        );
        assert!(matches!(
            normalize_url("http://h:1"),
            Err(Error::InvalidUrl { .. })
        ));
        assert!(normalize_url("nohost").is_err());
        if cfg!(not(feature = "tls")) {
            assert!(matches!(
                normalize_url("valkeys://h:1"),
                Err(Error::TlsDisabled(_))
            ));
        }
    }

    #[test]
    fn node_urls_keep_credentials_and_database() {
        assert_eq!(
            with_addr("redis://u:p@h:1/2?protocol=3", "127.0.0.2:7000"),
            "redis://u:p@127.0.0.2:7000/2?protocol=3"
        );
        assert_eq!(with_addr("redis://h:1", "a:2"), "redis://a:2");
    }

    /// An IPv6 node, as Valkey names it (no brackets), makes a URL that
    /// connects to it and reads back as the same address.
    #[test]
    fn ipv6_nodes_are_bracketed() {
        // What `with_addr` made of Valkey's own form: not a URL.
        assert!(redis::Client::open(with_addr("redis://h:1", "fd00::1:7000")).is_err());
        let addr = host_port("::1", 7000);
        assert_eq!(addr, "[::1]:7000");
        assert_eq!(host_port("[::1]", 7000), "[::1]:7000");
        assert_eq!(host_port("10.0.0.1", 7000), "10.0.0.1:7000");
        let url = with_addr("redis://u:p@10.0.0.1:6379/0", &addr);
        assert_eq!(url, "redis://u:p@[::1]:7000/0");
        assert_eq!(addr_of(&url).ok().as_deref(), Some("[::1]:7000"));
        assert_eq!(
            addr_of("redis://[::1]:6379").ok().as_deref(),
            Some("[::1]:6379")
        );
    }
}
