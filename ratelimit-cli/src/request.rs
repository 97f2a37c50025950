//! Building the request `explain` asks about from the command line.

use std::collections::BTreeMap;

use ratelimit_core::{HashKey, RequestAttrs};

use crate::args::{Args, UsageError};

fn usage(m: String) -> UsageError {
    UsageError(m)
}

/// `METHOD TARGET` (`POST /login?next=/`) as method, path and query.
///
/// # Errors
///
/// No method or no target starting with `/`.
pub fn request_line(line: &str) -> Result<(String, String, String), UsageError> {
    let mut words = line.split_whitespace();
    let (Some(method), Some(target), None) = (words.next(), words.next(), words.next()) else {
        return Err(usage(format!(
            "--request must be 'METHOD /path', not {line:?}"
        )));
    };
    if !target.starts_with('/') {
        return Err(usage(format!(
            "--request target must start with '/', not {target:?}"
        )));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok((
        method.to_ascii_uppercase(),
        path.to_owned(),
        query.to_owned(),
    ))
}

/// The request described by `explain`'s options.
///
/// # Errors
///
/// A missing or malformed `--request` or `--ip`, a header without `:`,
/// claims that are not a JSON object of strings or numbers, an `--app`
/// or `--viewer` without `=`.
pub fn from_args(args: &Args) -> Result<RequestAttrs, UsageError> {
    let line = args
        .value("--request")
        .ok_or_else(|| usage("explain needs --request 'METHOD /path'".into()))?;
    let (method, path, query) = request_line(line)?;
    let ip = args.value("--ip").unwrap_or("192.0.2.1");
    let ip = ip
        .parse()
        .map_err(|_| usage(format!("--ip must be an IP address, not {ip:?}")))?;
    let mut req = RequestAttrs::new(ip)
        .with_method(method)
        .with_path(path)
        .with_query(query);
    if let Some(host) = args.value("--host") {
        req = req.with_host(host);
    }
    for h in args.values("--header") {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| usage(format!("-H must be 'name: value', not {h:?}")))?;
        req = req.with_header(&name.trim().to_ascii_lowercase(), value.trim());
    }
    for kv in args.values("--app") {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| usage(format!("--app must be name=value, not {kv:?}")))?;
        req = req.with_app_value(k, v);
    }
    for kv in args.values("--viewer") {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| usage(format!("--viewer must be name=value, not {kv:?}")))?;
        let slot = match k {
            "country" => &mut req.country,
            "asnum" => &mut req.asnum,
            "ja4" => &mut req.ja4,
            "locale" => &mut req.locale,
            _ => {
                return Err(usage(format!(
                    "--viewer names country, asnum, ja4 or locale, not {k:?}"
                )))
            }
        };
        *slot = Some(v.to_owned());
    }
    if let Some(c) = args.value("--claims") {
        req = req.with_jwt_claims(claims(c)?);
    }
    Ok(req)
}

/// Verified claims from a JSON object of strings (numbers and booleans
/// written as JSON).
fn claims(json: &str) -> Result<BTreeMap<String, String>, UsageError> {
    let bad = || {
        usage(format!(
            "--claims must be a JSON object of strings, not {json:?}"
        ))
    };
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

/// The `--hash-key` option (32 hex digits), else the library's default
/// key: subject digests are those of a limiter with this key.
///
/// # Errors
///
/// Not 32 hex digits.
pub fn hash_key(args: &Args) -> Result<HashKey, UsageError> {
    let Some(hex) = args.value("--hash-key") else {
        return Ok(HashKey::DEFAULT);
    };
    let bad = || usage(format!("--hash-key must be 32 hex digits, not {hex:?}"));
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
        assert_eq!(l, ("POST".into(), "/login".into(), "next=/a".into()));
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
