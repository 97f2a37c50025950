//! A subject, readable: what an operator sees for the clients a rule
//! (would have) limited, next to the digest that stays its identity.
//!
//! Each key part is written `part=value` (`ip=203.0.113.7`,
//! `header:x-tenant=acme`), an IPv6 client as its /64 (what the key
//! counts), a key part missing under `fallback_ip` as the address with
//! `(fallback)`. Credentials never appear: every cookie, the
//! `authorization` and `proxy-authorization` headers, and headers or
//! query arguments named like a secret (a name containing `auth`, `key`,
//! `token`, `secret`, `session`, `password`, `credential` or `cookie`,
//! such as `x-api-key`) show as `[redacted]`. Values are cut to
//! [`MAX_VALUE`] characters with control characters replaced, so a label
//! is bounded (five parts at most).

use std::fmt::Write;
use std::net::IpAddr;

use crate::rules::{KeyPart, OnMissingKey, Rule};
use crate::{RequestView, ViewerFact};

/// Characters kept of one value.
pub(crate) const MAX_VALUE: usize = 64;

/// Name fragments that mark a header or query argument as a credential.
const SECRET_NAMES: [&str; 8] = [
    "auth",
    "key",
    "token",
    "secret",
    "session",
    "password",
    "credential",
    "cookie",
];

const REDACTED: &str = "[redacted]";

/// Whether a header or query argument called `name` may carry a credential.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| name.contains(s))
}

/// The address as the key counts it: IPv4 whole, IPv6 as its /64.
fn ip_text(ip: IpAddr) -> String {
    let (b, n) = super::ip_bytes(ip);
    if n == 4 {
        return format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
    }
    let mut o = [0u8; 16];
    o[..8].copy_from_slice(&b);
    format!("{}/64", std::net::Ipv6Addr::from(o))
}

/// `value` as text: lossy UTF-8, control characters as `?`, at most
/// [`MAX_VALUE`] characters (then `…`).
fn text(value: &[u8]) -> String {
    let s = String::from_utf8_lossy(value);
    let mut out: String = s
        .chars()
        .take(MAX_VALUE)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().nth(MAX_VALUE).is_some() {
        out.push('…');
    }
    out
}

/// One part's readable value; `None` when the request does not carry it.
fn part_text(part: &KeyPart, req: &dyn RequestView, jwt_off: bool) -> Option<String> {
    let present = |v: &[u8]| (!v.iter().all(u8::is_ascii_whitespace)).then(|| text(v));
    Some(match part {
        KeyPart::Ip => ip_text(req.client_ip()),
        KeyPart::JwtClaim(_) if jwt_off => return None,
        KeyPart::JwtClaim(n) => present(req.jwt_claim(n)?.as_bytes())?,
        KeyPart::Header(n) => {
            let v = present(req.header(n)?)?;
            if is_secret_name(n) {
                REDACTED.to_owned()
            } else {
                v
            }
        }
        KeyPart::Cookie(n) => {
            present(req.cookie(n)?)?;
            REDACTED.to_owned()
        }
        KeyPart::Query(n) => {
            let v = present(&req.query_arg_bytes(n)?)?;
            if is_secret_name(n) {
                REDACTED.to_owned()
            } else {
                v
            }
        }
        KeyPart::Host => text(req.host().as_bytes()),
        KeyPart::Method => text(req.method().as_bytes()),
        KeyPart::Country => text(req.viewer(ViewerFact::Country)?.as_bytes()),
        KeyPart::Asnum => text(req.viewer(ViewerFact::Asnum)?.as_bytes()),
        KeyPart::Ja4 => text(req.viewer(ViewerFact::Ja4)?.as_bytes()),
        KeyPart::Locale => text(req.viewer(ViewerFact::Locale)?.as_bytes()),
        KeyPart::App(n) => present(req.app_value(n)?.as_bytes())?,
        KeyPart::Constant => return Some("everyone".to_owned()),
    })
}

/// The readable subject of `rule` for `req` (the request the subject's
/// digest was computed from), or `None` when the rule skips or rejects it.
pub(crate) fn label(rule: &Rule, req: &dyn RequestView, jwt_off: bool) -> Option<String> {
    let mut out = String::new();
    for part in rule.key.iter() {
        let Some(v) = part_text(part, req, jwt_off) else {
            return match rule.on_missing_key {
                OnMissingKey::Skip | OnMissingKey::Reject => None,
                _ => Some(format!("ip={} (fallback)", ip_text(req.client_ip()))),
            };
        };
        if !out.is_empty() {
            out.push_str(", ");
        }
        match part {
            KeyPart::Constant => {}
            _ => {
                let _ = write!(out, "{part}=");
            }
        }
        out.push_str(&v);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
