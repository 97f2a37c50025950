//! The parts of a request and its answer that a rule names: its key parts
//! (`key`), its `distinct_of` source and its `count_statuses` entries. How
//! a request's parts become its subject is `subject.rs`.

use std::fmt;

mod unknown;

/// One part of a rule's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyPart {
    /// The client IP (IPv6 per /64; `::192.0.2.1`, the deprecated
    /// IPv4-compatible form, is in `::/64` with every other such address).
    Ip,
    /// A claim of a verified JWT.
    JwtClaim(String),
    /// A request header (first value), name lower-cased.
    Header(String),
    /// A cookie (first value).
    Cookie(String),
    /// A query argument (first value, decoded).
    Query(String),
    /// The host.
    Host,
    /// The method.
    Method,
    /// Viewer country.
    Country,
    /// Viewer autonomous system number.
    Asnum,
    /// Viewer TLS fingerprint.
    Ja4,
    /// Viewer locale.
    Locale,
    /// A value the application put on the request.
    App(String),
    /// One counter for everyone.
    Constant,
}

impl KeyPart {
    /// Parses `ip`, `jwt_claim:sub`, `header:x-tenant`, ...
    pub fn parse(s: &str) -> Result<KeyPart, String> {
        let named = |prefix: &str, f: fn(String) -> KeyPart| -> Option<Result<KeyPart, String>> {
            let name = s.strip_prefix(prefix)?;
            Some(check_name(name, s).map(|n| f(n.to_owned())))
        };
        if let Some(r) = named("jwt_claim:", KeyPart::JwtClaim)
            .or_else(|| named("cookie:", KeyPart::Cookie))
            .or_else(|| named("query:", KeyPart::Query))
            .or_else(|| named("app:", KeyPart::App))
        {
            return r;
        }
        if let Some(name) = s.strip_prefix("header:") {
            check_name(name, s)?;
            if !name.bytes().all(is_token_char) {
                return Err(format!("{s:?}: {name:?} is not a header name"));
            }
            return Ok(KeyPart::Header(name.to_ascii_lowercase()));
        }
        Ok(match s {
            "ip" => KeyPart::Ip,
            "host" => KeyPart::Host,
            "method" => KeyPart::Method,
            "country" => KeyPart::Country,
            "asnum" => KeyPart::Asnum,
            "ja4" => KeyPart::Ja4,
            "locale" => KeyPart::Locale,
            "constant" => KeyPart::Constant,
            _ => return Err(unknown::unknown_part(s)),
        })
    }

    /// Whether a client chooses this value freely (needs an `ip` or
    /// `jwt_claim` partner).
    pub fn attacker_controlled(&self) -> bool {
        matches!(
            self,
            KeyPart::Header(_)
                | KeyPart::Cookie(_)
                | KeyPart::Query(_)
                | KeyPart::Host
                | KeyPart::Method
                | KeyPart::Ja4
                | KeyPart::App(_)
        )
    }

    /// Whether this part can vouch for an attacker-controlled one.
    pub fn is_partner(&self) -> bool {
        matches!(self, KeyPart::Ip | KeyPart::JwtClaim(_))
    }
}

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPart::Ip => f.write_str("ip"),
            KeyPart::JwtClaim(n) => write!(f, "jwt_claim:{n}"),
            KeyPart::Header(n) => write!(f, "header:{n}"),
            KeyPart::Cookie(n) => write!(f, "cookie:{n}"),
            KeyPart::Query(n) => write!(f, "query:{n}"),
            KeyPart::Host => f.write_str("host"),
            KeyPart::Method => f.write_str("method"),
            KeyPart::Country => f.write_str("country"),
            KeyPart::Asnum => f.write_str("asnum"),
            KeyPart::Ja4 => f.write_str("ja4"),
            KeyPart::Locale => f.write_str("locale"),
            KeyPart::App(n) => write!(f, "app:{n}"),
            KeyPart::Constant => f.write_str("constant"),
        }
    }
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_name<'a>(name: &'a str, whole: &str) -> Result<&'a str, String> {
    if name.is_empty() {
        Err(format!("{whole:?} needs a name after the colon"))
    } else if name.len() > 128 {
        Err(format!("{whole:?}: the name is longer than 128 bytes"))
    } else {
        Ok(name)
    }
}

/// What a `distinct` rule counts different values of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DistinctOf {
    /// The normalized path.
    Path,
    /// The decoded first value of a query argument.
    Query(String),
    /// The client IP (IPv6 per /64; `::192.0.2.1`, the deprecated
    /// IPv4-compatible form, is in `::/64` with every other such address).
    Ip,
    /// Viewer autonomous system number.
    Asnum,
    /// Viewer TLS fingerprint.
    Ja4,
    /// A value the application put on the request.
    App(String),
}

impl DistinctOf {
    /// Parses `path`, `query:<name>`, `ip`, `asnum`, `ja4` or `app:<name>`.
    pub fn parse(s: &str) -> Result<DistinctOf, String> {
        if let Some(n) = s.strip_prefix("query:") {
            return check_name(n, s).map(|n| DistinctOf::Query(n.to_owned()));
        }
        if let Some(n) = s.strip_prefix("app:") {
            return check_name(n, s).map(|n| DistinctOf::App(n.to_owned()));
        }
        Ok(match s {
            "path" => DistinctOf::Path,
            "ip" => DistinctOf::Ip,
            "asnum" => DistinctOf::Asnum,
            "ja4" => DistinctOf::Ja4,
            _ => {
                return Err(format!(
                    "{s:?} is not one of path, query:<name>, ip, asnum, ja4, app:<name>"
                ))
            }
        })
    }
}

impl fmt::Display for DistinctOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistinctOf::Path => f.write_str("path"),
            DistinctOf::Query(n) => write!(f, "query:{n}"),
            DistinctOf::Ip => f.write_str("ip"),
            DistinctOf::Asnum => f.write_str("asnum"),
            DistinctOf::Ja4 => f.write_str("ja4"),
            DistinctOf::App(n) => write!(f, "app:{n}"),
        }
    }
}

/// One entry of `count_statuses`: a status (100-499) or a class (1xx-4xx).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusMatch {
    /// Exactly this status.
    Exact(u16),
    /// Every status of this class (1 to 4).
    Class(u8),
}

impl StatusMatch {
    /// Parses `"404"` or `"4xx"`; 5xx is refused.
    pub fn parse(s: &str) -> Result<StatusMatch, String> {
        let five = || {
            format!("{s:?}: 5xx is refused (usually the upstream's fault; counting it locks clients out after an outage)")
        };
        let b = s.as_bytes();
        if b.len() == 3 && (&b[1..] == b"xx" || &b[1..] == b"XX") {
            return match b[0] {
                c @ b'1'..=b'4' => Ok(StatusMatch::Class(c - b'0')),
                b'5' => Err(five()),
                _ => Err(format!("{s:?} is not a status class 1xx to 4xx")),
            };
        }
        match s.parse::<u16>() {
            Ok(n) if b.len() == 3 && (100..=499).contains(&n) => Ok(StatusMatch::Exact(n)),
            Ok(n) if (500..=599).contains(&n) => Err(five()),
            _ => Err(format!(
                "{s:?} is not a status 100 to 499 or a class 1xx to 4xx"
            )),
        }
    }

    /// Whether `status` is counted.
    pub fn matches(&self, status: u16) -> bool {
        match *self {
            StatusMatch::Exact(s) => s == status,
            StatusMatch::Class(c) => status / 100 == c as u16,
        }
    }
}

impl fmt::Display for StatusMatch {
    /// Writes `"404"` or `"4xx"`, as [`StatusMatch::parse`] reads them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StatusMatch::Exact(s) => write!(f, "{s}"),
            StatusMatch::Class(c) => write!(f, "{c}xx"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_parts_parse_and_print_back() {
        for s in [
            "ip",
            "jwt_claim:sub",
            "header:x-tenant",
            "cookie:sid",
            "query:q",
            "host",
            "method",
            "country",
            "asnum",
            "ja4",
            "locale",
            "constant",
            "app:username",
        ] {
            assert_eq!(KeyPart::parse(s).map(|k| k.to_string()), Ok(s.to_owned()));
        }
        assert_eq!(
            KeyPart::parse("header:X-Tenant"),
            Ok(KeyPart::Header("x-tenant".into()))
        );
        assert!(KeyPart::parse("header:").is_err());
        assert!(KeyPart::parse("header:a b").is_err());
        assert!(KeyPart::parse("user").is_err());
    }

    /// Found by the `rules_json` fuzz target: a 3-byte status whose first
    /// character is not ASCII (`"éx"`, `"\u{fffd}"`) sliced `s[1..]` inside
    /// that character and panicked.
    #[test]
    fn status_match_multibyte_first_char_does_not_panic() {
        for s in ["éx", "\u{fffd}", "\u{20ac}", "€xx"] {
            assert!(StatusMatch::parse(s).is_err(), "{s:?}");
        }
    }

    #[test]
    fn statuses_refuse_5xx_and_out_of_range() {
        assert_eq!(StatusMatch::parse("404"), Ok(StatusMatch::Exact(404)));
        assert_eq!(StatusMatch::parse("4xx"), Ok(StatusMatch::Class(4)));
        for bad in ["5xx", "500", "503", "99", "600", "0404", "abc", "6xx", ""] {
            assert!(StatusMatch::parse(bad).is_err(), "{bad}");
        }
        assert!(StatusMatch::Class(4).matches(401));
        for s in ["100", "404", "499", "1xx", "4xx"] {
            assert_eq!(
                StatusMatch::parse(s).map(|m| m.to_string()),
                Ok(s.to_owned())
            );
        }
        assert!(!StatusMatch::Exact(404).matches(403));
    }
}
