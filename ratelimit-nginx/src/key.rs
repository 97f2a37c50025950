//! Zone keys: text and variables, such as `$client_ip` or `$http_x_tenant-`.
//!
//! Variables are `$client_ip` (nginx's `$binary_remote_addr` is read as
//! it), `$remote_addr`, `$site`, `$host`, `$method`, `$path` and
//! `$http_<name>` (the first value of a request header, `_` for `-`);
//! `${name}` separates a variable from the text after it. Credential
//! headers are refused: `cookie`, `authorization`, `proxy-authorization`,
//! `x-api-key`, `x-auth-token` and any name in the redact list.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::KeyTemplate;
//! use ratelimit_core::RequestAttrs;
//!
//! let key = KeyTemplate::parse("$http_x_tenant-").unwrap();
//! let req = RequestAttrs::new("192.0.2.1".parse().unwrap());
//! // Literal text keeps the key non-empty when the header is missing.
//! assert_eq!(key.render(&req), b"-");
//! assert!(KeyTemplate::parse("$http_authorization").is_err());
//! ```

use std::fmt;
use std::io::Write;
use std::net::IpAddr;

use super::error::{ConfigError, ConfigErrorKind};
#[cfg(test)]
use ratelimit_core::RequestAttrs;
use ratelimit_core::RequestView;
use ratelimit_core::{normalize_host, normalize_path};

/// Header names that may never be part of a key.
pub(crate) const CREDENTIAL_HEADERS: [&str; 5] = [
    "cookie",
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-auth-token",
];

/// What a key can read from a request; every value is known before the body.
pub trait KeySource {
    /// The client address after trusted-proxy (realip) selection.
    fn client_ip(&self) -> Option<IpAddr>;
    /// The TCP peer address.
    fn remote_addr(&self) -> Option<IpAddr>;
    /// The name of the site the request was routed to.
    fn site(&self) -> Option<&str>;
    /// The host as sent; the key normalizes it.
    fn host(&self) -> &str;
    /// The method, such as `GET`.
    fn method(&self) -> &str;
    /// The path as sent, without the query; the key decodes and normalizes it.
    fn path(&self) -> &[u8];
    /// The first value of header `name` (lower-case, with dashes).
    fn header(&self, name: &str) -> Option<&[u8]>;
}

/// Any request the rule engine reads ([`RequestView`]: the core's
/// [`RequestAttrs`](ratelimit_core::RequestAttrs), the tower layer's
/// borrowed view, your own) is a key source: `$remote_addr` is the client
/// address (there is no separate peer), and `$site` the application value
/// `site` (see [`RequestAttrs::with_app_value`](ratelimit_core::RequestAttrs::with_app_value)).
impl<T: RequestView + ?Sized> KeySource for T {
    fn client_ip(&self) -> Option<IpAddr> {
        Some(RequestView::client_ip(self))
    }
    fn remote_addr(&self) -> Option<IpAddr> {
        Some(RequestView::client_ip(self))
    }
    fn site(&self) -> Option<&str> {
        self.app_value("site")
    }
    fn host(&self) -> &str {
        RequestView::host(self)
    }
    fn method(&self) -> &str {
        RequestView::method(self)
    }
    fn path(&self) -> &[u8] {
        RequestView::path(self).as_bytes()
    }
    fn header(&self, name: &str) -> Option<&[u8]> {
        RequestView::header(self, name)
    }
}

/// A variable of a key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub(crate) enum KeyVar {
    /// `$client_ip` (or `$binary_remote_addr`).
    ClientIp,
    /// `$remote_addr`.
    RemoteAddr,
    /// `$site`.
    Site,
    /// `$host`, normalized.
    Host,
    /// `$method`.
    Method,
    /// `$path`, decoded and dot-normalized.
    Path,
    /// `$http_<name>`: the header, lower-case with dashes.
    Header(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Part {
    Text(String),
    Var(KeyVar),
}

/// A parsed key: literal text and variables.
///
/// Two keys are equal when they read the same: `$binary_remote_addr`
/// equals `$client_ip`.
#[derive(Debug, Clone)]
pub struct KeyTemplate {
    parts: Vec<Part>,
    source: String,
}

impl PartialEq for KeyTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for KeyTemplate {}

impl std::hash::Hash for KeyTemplate {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts.hash(state);
    }
}

impl KeyTemplate {
    /// Parses a key, refusing the built-in credential headers.
    ///
    /// # Errors
    ///
    /// See [`KeyTemplate::parse_with_redact`].
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        Self::parse_with_redact(text, &[] as &[&str])
    }

    /// Parses a key, refusing credential headers and every name in `redact`.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::UnknownVariable`] for a `$` that does not start a
    /// known variable, [`ConfigErrorKind::CredentialInKey`] for a
    /// credential header.
    pub fn parse_with_redact<S: AsRef<str>>(text: &str, redact: &[S]) -> Result<Self, ConfigError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(dollar) = rest.find('$') {
            if dollar > 0 {
                parts.push(Part::Text(rest[..dollar].to_owned()));
            }
            let after = &rest[dollar + 1..];
            let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
                match braced.find('}') {
                    Some(end) => (&braced[..end], &braced[end + 1..]),
                    None => return Err(unknown(text, "a \"${\" without \"}\"")),
                }
            } else {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            };
            parts.push(Part::Var(variable(name, text, redact)?));
            rest = tail;
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Self {
            parts,
            source: text.to_owned(),
        })
    }

    /// The key as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variables the key reads, in order (the layers' settings read them).
    #[cfg(feature = "tower")]
    pub(crate) fn variables(&self) -> impl Iterator<Item = &KeyVar> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v),
            Part::Text(_) => None,
        })
    }

    /// The key of one request; an empty key is not counted.
    pub fn render(&self, src: &dyn KeySource) -> Vec<u8> {
        let mut out = Vec::new();
        self.render_into(src, &mut out);
        out
    }

    /// Appends the key of one request to `out`.
    pub fn render_into(&self, src: &dyn KeySource, out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Text(t) => out.extend_from_slice(t.as_bytes()),
                Part::Var(KeyVar::ClientIp) => write_ip(out, src.client_ip()),
                Part::Var(KeyVar::RemoteAddr) => write_ip(out, src.remote_addr()),
                Part::Var(KeyVar::Site) => {
                    out.extend_from_slice(src.site().unwrap_or("").as_bytes())
                }
                Part::Var(KeyVar::Host) => {
                    out.extend_from_slice(normalize_host(src.host()).as_bytes())
                }
                Part::Var(KeyVar::Method) => out.extend_from_slice(src.method().as_bytes()),
                Part::Var(KeyVar::Path) => out.extend_from_slice(&normalize_path(src.path())),
                Part::Var(KeyVar::Header(name)) => {
                    out.extend_from_slice(src.header(name).unwrap_or(b""))
                }
            }
        }
    }
}

impl fmt::Display for KeyTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn write_ip(out: &mut Vec<u8>, ip: Option<IpAddr>) {
    if let Some(ip) = ip {
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{ip}");
    }
}

fn unknown(text: &str, what: &str) -> ConfigError {
    ConfigError::new(
        ConfigErrorKind::UnknownVariable,
        format!("{what} in key \"{text}\""),
    )
}

fn variable<S: AsRef<str>>(name: &str, text: &str, redact: &[S]) -> Result<KeyVar, ConfigError> {
    Ok(match name {
        "client_ip" | "binary_remote_addr" => KeyVar::ClientIp,
        "remote_addr" => KeyVar::RemoteAddr,
        "site" => KeyVar::Site,
        "host" => KeyVar::Host,
        "method" => KeyVar::Method,
        "path" => KeyVar::Path,
        "" => return Err(unknown(text, "a \"$\" without a variable name")),
        _ => {
            match name.strip_prefix("http_") {
                Some(header) if !header.is_empty() => {
                    let header = header.replace('_', "-").to_ascii_lowercase();
                    let refused = CREDENTIAL_HEADERS.iter().any(|c| *c == header)
                        || redact
                            .iter()
                            .any(|r| r.as_ref().replace('_', "-").eq_ignore_ascii_case(&header));
                    if refused {
                        return Err(ConfigError::new(
                        ConfigErrorKind::CredentialInKey,
                        format!("the credential header \"{header}\" cannot be part of key \"{text}\""),
                    ));
                    }
                    KeyVar::Header(header)
                }
                _ => return Err(unknown(text, &format!("unknown variable \"${name}\""))),
            }
        }
    })
}

#[cfg(test)]
mod tests;
