//! Allow lists: IPs / CIDRs and key values that bypass a rule (health
//! checks, internal networks).
//!
//! ```json
//! "allow": {"ips": ["10.0.0.0/8", "2001:db8::/32"],
//!           "values": {"header:x-health-probe": ["k8s"], "jwt_claim:sub": ["svc-monitor"]}}
//! ```
//!
//! A request from a listed IP, or whose value of a listed key part is
//! listed, bypasses the rule: the rule is not applied and takes no slot.
//! Header, cookie and query values are chosen by the client: list them only
//! for rules where a bypass is harmless, or pair them with an IP list in a
//! separate rule.

use serde_json::Value;

use super::parts::KeyPart;
use crate::cidr::{parse_net, IpSet};
#[cfg(test)]
use crate::RequestAttrs;
use crate::{RequestView, ViewerFact};

/// IPs and key values that bypass one rule.
///
/// Equality compares the IPs as written and the listed values per key part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    ips: IpSet,
    /// The IPs / CIDRs as written, for writing the list back.
    ip_text: Vec<String>,
    /// One entry per key part, sorted by its name (as a JSON object).
    values: Vec<(KeyPart, Vec<String>)>,
}

impl AllowList {
    /// A list from IPs / CIDRs (`"10.0.0.0/8"`, `"192.0.2.1"`) and key values.
    ///
    /// # Errors
    ///
    /// An address or network that does not parse, an unknown key part.
    pub fn new<'a>(
        ips: impl IntoIterator<Item = &'a str>,
        values: impl IntoIterator<Item = (&'a str, Vec<String>)>,
    ) -> Result<Self, String> {
        let ip_text: Vec<String> = ips.into_iter().map(str::to_owned).collect();
        let nets = ip_text
            .iter()
            .map(|s| {
                parse_net(s).ok_or_else(|| format!("{s:?} is not an IP address or CIDR network"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut merged: Vec<(KeyPart, Vec<String>)> = Vec::new();
        for (part, list) in values {
            let part = KeyPart::parse(part)?;
            if part == KeyPart::Constant || part == KeyPart::Ip {
                return Err(format!(
                    "{part} cannot be listed by value (use ips for addresses)"
                ));
            }
            match merged.iter_mut().find(|(p, _)| *p == part) {
                Some((_, old)) => old.extend(list),
                None => merged.push((part, list)),
            }
        }
        merged.sort_by_cached_key(|(p, _)| p.to_string());
        Ok(Self {
            ips: IpSet::new(nets),
            ip_text,
            values: merged,
        })
    }

    /// Reads the JSON form.
    pub(crate) fn from_json(v: &Value) -> Result<Self, String> {
        let obj = v
            .as_object()
            .ok_or("must be an object with ips and/or values")?;
        let mut ips: Vec<&str> = Vec::new();
        let mut values: Vec<(&str, Vec<String>)> = Vec::new();
        for (k, v) in obj {
            match k.as_str() {
                "ips" => {
                    let arr = v.as_array().ok_or("ips must be a list of strings")?;
                    for ip in arr {
                        ips.push(ip.as_str().ok_or("ips must be a list of strings")?);
                    }
                }
                "values" => {
                    let map = v
                        .as_object()
                        .ok_or("values must map key parts to lists of strings")?;
                    for (part, list) in map {
                        let list = list
                            .as_array()
                            .and_then(|a| {
                                a.iter()
                                    .map(|x| x.as_str().map(str::to_owned))
                                    .collect::<Option<Vec<_>>>()
                            })
                            .ok_or_else(|| format!("values.{part} must be a list of strings"))?;
                        values.push((part.as_str(), list));
                    }
                }
                other => return Err(format!("unknown field {other:?} (ips, values)")),
            }
        }
        Self::new(ips, values)
    }

    /// The JSON form, as [`AllowList::from_json`] reads it: `ips` and
    /// `values` when not empty.
    pub(crate) fn to_json(&self) -> Value {
        let mut obj = serde_json::Map::new();
        if !self.ip_text.is_empty() {
            obj.insert("ips".into(), self.ip_text.clone().into());
        }
        if !self.values.is_empty() {
            let values = self
                .values
                .iter()
                .map(|(p, list)| (p.to_string(), Value::from(list.clone())))
                .collect();
            obj.insert("values".into(), Value::Object(values));
        }
        Value::Object(obj)
    }

    /// The key parts listed by value.
    pub fn parts(&self) -> impl Iterator<Item = &KeyPart> {
        self.values.iter().map(|(p, _)| p)
    }

    /// Whether a client can bypass the rule at will: the list holds every
    /// IPv4 or every IPv6 address, or a value of a part the client chooses
    /// (header, cookie, query, host, method, ja4).
    pub(crate) fn bypassable(&self) -> bool {
        (!self.ip_text.is_empty() && self.ips.covers_a_family())
            || self.values.iter().any(|(p, _)| p.attacker_controlled())
    }

    /// Whether `req` bypasses the rule. With `jwt_off`, claims are missing.
    pub fn matches(&self, req: &dyn RequestView, jwt_off: bool) -> bool {
        if !self.ip_text.is_empty() && self.ips.contains(req.client_ip()) {
            return true;
        }
        self.values.iter().any(|(part, list)| {
            let value: Option<std::borrow::Cow<'_, [u8]>> = match part {
                KeyPart::JwtClaim(n) if !jwt_off => req.jwt_claim(n).map(|s| s.as_bytes().into()),
                KeyPart::Header(n) => req.header(n).map(Into::into),
                KeyPart::Cookie(n) => req.cookie(n).map(Into::into),
                KeyPart::Query(n) => req.query_arg_bytes(n),
                KeyPart::Host => Some(req.host().as_bytes().into()),
                KeyPart::Method => Some(req.method().as_bytes().into()),
                KeyPart::Country => viewer(req, ViewerFact::Country),
                KeyPart::Asnum => viewer(req, ViewerFact::Asnum),
                KeyPart::Ja4 => viewer(req, ViewerFact::Ja4),
                KeyPart::Locale => viewer(req, ViewerFact::Locale),
                KeyPart::App(n) => req.app_value(n).map(|s| s.as_bytes().into()),
                // A claim with JWT off is missing; addresses are matched
                // above (`ips`), and a constant is never listed.
                KeyPart::JwtClaim(_) | KeyPart::Ip | KeyPart::Constant => None,
            };
            value.is_some_and(|v| list.iter().any(|l| l.as_bytes() == &*v))
        })
    }
}

fn viewer(req: &dyn RequestView, fact: ViewerFact) -> Option<std::borrow::Cow<'_, [u8]>> {
    req.viewer(fact).map(|s| s.as_bytes().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_cidrs_and_values_bypass() {
        let a = AllowList::new(
            ["10.0.0.0/8", "2001:db8::/32"],
            [("header:x-probe", vec!["k8s".to_owned()])],
        )
        .unwrap();
        let r = |ip: &str| RequestAttrs::new(ip.parse().unwrap());
        assert!(a.matches(&r("10.1.2.3"), false));
        assert!(a.matches(&r("::ffff:10.1.2.3"), false));
        assert!(a.matches(&r("2001:db8:5::1"), false));
        assert!(!a.matches(&r("192.0.2.1"), false));
        assert!(a.matches(&r("192.0.2.1").with_header("x-probe", "k8s"), false));
        assert!(!a.matches(&r("192.0.2.1").with_header("x-probe", "K8S"), false));
    }

    #[test]
    fn bad_entries_are_refused() {
        assert!(AllowList::new(["10.0.0.0/33"], []).is_err());
        assert!(AllowList::new(["nope"], []).is_err());
        assert!(AllowList::new([], [("ip", vec![])]).is_err());
        assert!(AllowList::from_json(&serde_json::json!({"cidrs": []})).is_err());
    }

    #[test]
    fn lists_write_back_to_the_json_they_were_read_from() {
        let json = serde_json::json!({
            "ips": ["10.0.0.0/8", "::ffff:192.0.2.1"],
            "values": {"header:x-probe": ["k8s"], "app:tenant": ["ops", "ci"]}
        });
        let a = AllowList::from_json(&json).unwrap();
        assert_eq!(a.to_json(), json);
        assert_eq!(AllowList::from_json(&a.to_json()), Ok(a));
        let empty = AllowList::from_json(&serde_json::json!({})).unwrap();
        assert_eq!(empty.to_json(), serde_json::json!({}));
    }

    #[test]
    fn a_part_listed_twice_in_rust_merges_and_sorts() {
        let a = AllowList::new(
            [],
            [
                ("header:x-b", vec!["1".to_owned()]),
                ("header:x-a", vec!["2".to_owned()]),
                ("header:x-b", vec!["3".to_owned()]),
            ],
        )
        .unwrap();
        let json = serde_json::json!({"values": {"header:x-a": ["2"], "header:x-b": ["1", "3"]}});
        assert_eq!(a.to_json(), json);
        assert_eq!(AllowList::from_json(&json), Ok(a));
    }
}
