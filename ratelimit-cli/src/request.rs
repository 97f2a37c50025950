//! Building the request `explain` asks about from the command line: the
//! options' value parsers (a bad value is a usage error, exit 64) and the
//! request they make.

use std::collections::BTreeMap;

use ratelimit_core::{HashKey, RequestAttrs};

/// A request line, `METHOD /path?query`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestLine {
    /// The method, upper case.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query, without the `?`.
    pub query: String,
}

/// `METHOD TARGET` (`POST /login?next=/`).
pub(crate) fn request_line(line: &str) -> Result<RequestLine, String> {
    let mut words = line.split_whitespace();
    let (Some(method), Some(target), None) = (words.next(), words.next(), words.next()) else {
        return Err(format!("must be 'METHOD /path', not {line:?}"));
    };
    if !target.starts_with('/') {
        return Err(format!("the target must start with '/', not {target:?}"));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(RequestLine {
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        query: query.to_owned(),
    })
}

/// `name: value`, the name in lower case.
pub(crate) fn header(h: &str) -> Result<(String, String), String> {
    let (name, value) = h
        .split_once(':')
        .ok_or_else(|| format!("must be 'name: value', not {h:?}"))?;
    Ok((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
}

/// `name=value`.
pub(crate) fn name_value(kv: &str) -> Result<(String, String), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("must be name=value, not {kv:?}"))?;
    Ok((k.to_owned(), v.to_owned()))
}

/// A viewer fact: `country`, `asnum`, `ja4` or `locale`, `=value`.
pub(crate) fn viewer(kv: &str) -> Result<(String, String), String> {
    let (k, v) = name_value(kv)?;
    match k.as_str() {
        "country" | "asnum" | "ja4" | "locale" => Ok((k, v)),
        _ => Err(format!("names country, asnum, ja4 or locale, not {k:?}")),
    }
}

/// The request described by `explain`'s options.
pub(crate) fn from_options(o: &crate::ExplainOptions) -> RequestAttrs {
    let r = &o.request;
    let mut req = RequestAttrs::new(o.ip)
        .with_method(r.method.clone())
        .with_path(r.path.clone())
        .with_query(r.query.clone());
    if let Some(host) = &o.host {
        req = req.with_host(host);
    }
    for (name, value) in &o.headers {
        req = req.with_header(name, value);
    }
    for (k, v) in &o.app {
        req = req.with_app_value(k, v);
    }
    for (k, v) in &o.viewer {
        let slot = match k.as_str() {
            "country" => &mut req.country,
            "asnum" => &mut req.asnum,
            "ja4" => &mut req.ja4,
            _ => &mut req.locale,
        };
        *slot = Some(v.clone());
    }
    if let Some(c) = &o.claims {
        req = req.with_jwt_claims(c.clone());
    }
    req
}

/// Verified claims from a JSON object of strings (numbers and booleans
/// written as JSON).
pub(crate) fn claims(json: &str) -> Result<BTreeMap<String, String>, String> {
    let bad = || format!("must be a JSON object of strings, not {json:?}");
    let v: serde_json::Value = serde_json::from_str(json).map_err(|_| bad())?;
    let obj = v.as_object().ok_or_else(bad)?;
    obj.iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                Ok((k.clone(), v.to_string()))
            }
            _ => Err(bad()),
        })
        .collect()
}

/// `--hash-key`: 32 hex digits. Without it, subject digests are those of a
/// limiter with the library's default key.
pub(crate) fn hash_key(hex: &str) -> Result<HashKey, String> {
    let bad = || format!("must be 32 hex digits, not {hex:?}");
    if hex.len() != 32 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut bytes = [0u8; 16];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(HashKey::new(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let l = request_line("post /login?next=/a").unwrap();
        assert_eq!(
            (&*l.method, &*l.path, &*l.query),
            ("POST", "/login", "next=/a")
        );
        assert!(request_line("GET").is_err());
        assert!(request_line("GET login").is_err());
        assert!(request_line("GET / extra").is_err());
    }

    #[test]
    fn claims_are_strings() {
        assert_eq!(claims(r#"{"sub": "a", "n": 2}"#).unwrap()["n"], "2");
        assert!(claims("[1]").is_err());
        assert!(claims(r#"{"a": [1]}"#).is_err());
    }
}
