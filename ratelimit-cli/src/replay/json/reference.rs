//! The JSON-lines reader as it was before the plain one, kept (for the
//! tests only) as the reference they compare the reader with.

use super::*;

/// The JSON-lines reader as it was before the plain one, kept as the
/// reference: serde_json reads every line ([`read_fields`] is its field
/// struct) and every field ([`string_serde`], [`strings_serde`] and the
/// `time` below are its code).
pub(super) fn old_parse<'a>(line: &'a str, unit: TimeUnit) -> Result<LogLine<'a>, LogError> {
    if !line.trim_start().starts_with('{') {
        return Err(LogError("not a JSON object"));
    }
    let f = read_fields(line)?;
    let text = |raw: Option<&'a str>| raw.and_then(|t| string_serde(t).ok());
    let strings =
        |raw: Option<&'a str>, what| raw.map_or(Ok(Vec::new()), |r| strings_serde(r, what));
    let ip = text(f.ip).ok_or(LogError("no \"ip\" string"))?;
    let ip: IpAddr = ip.parse().map_err(|_| LogError("\"ip\" is not an IP"))?;
    let time_ms = old_time(f.time, unit)?;
    let target = text(f.path).ok_or(LogError("no \"path\" string"))?;
    if !target.starts_with('/') {
        return Err(LogError("\"path\" does not start with /"));
    }
    let (path, query) = match target {
        Cow::Borrowed(t) => {
            let (p, q) = split_target(t);
            (Cow::Borrowed(p), Cow::Borrowed(q))
        }
        Cow::Owned(t) => {
            let (p, q) = split_target(&t);
            (Cow::Owned(p.to_owned()), Cow::Owned(q.to_owned()))
        }
    };
    let query = text(f.query).unwrap_or(query);
    let mut headers = strings(f.headers, "\"headers\" is not an object of strings")?;
    if let Some(raw) = f.forwarded_for {
        let v = string_serde(raw).map_err(|()| LogError("\"forwarded_for\" is not a string"))?;
        headers.push((Cow::Borrowed("x-forwarded-for"), v));
    }
    let claims = match f.claims {
        None => None,
        Some(_) => Some(
            strings(f.claims, "\"claims\" is not an object of strings")?
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ),
    };
    Ok(LogLine {
        ip: Some(ip),
        time_ms,
        method: cased(text(f.method).unwrap_or(Cow::Borrowed("GET")), true),
        path,
        query,
        host: cased(text(f.host).unwrap_or_default(), false),
        status: (f.status)
            .and_then(|t| t.parse::<u64>().ok())
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(0),
        headers,
        claims,
        app: strings(f.app, "\"app\" is not an object of strings")?
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
    })
}

/// The `time` of the reader before, as it was.
pub(super) fn old_time(raw: Option<&str>, unit: TimeUnit) -> Result<u64, LogError> {
    let missing = LogError("no \"time\" (RFC 3339, or a Unix time as a number)");
    let out_of_range = LogError(crate::time::number_error(unit));
    let Some(raw) = raw else {
        return Err(missing);
    };
    let v: serde_json::Value = serde_json::from_str(raw).map_err(|_| missing.clone())?;
    match v {
        serde_json::Value::String(t) if t.contains(['-', '/']) && !t.starts_with('-') => {
            crate::time::rfc3339_ms(&t).ok_or(LogError(
                "\"time\" is not an RFC 3339 time from 1970 to 9999",
            ))
        }
        serde_json::Value::String(t) if t.starts_with(|c: char| c.is_ascii_digit()) => {
            crate::time::epoch_ms(&t, unit).ok_or(out_of_range)
        }
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(whole), _) => crate::time::epoch_ms(&whole.to_string(), unit).ok_or(out_of_range),
            (None, Some(f)) if f.is_finite() && f >= 0.0 => {
                let ms = match unit {
                    TimeUnit::Ms => f,
                    _ => f * 1000.0,
                };
                (ms <= crate::time::MAX_MS as f64)
                    .then_some(ms as u64)
                    .ok_or(out_of_range)
            }
            _ => Err(out_of_range),
        },
        _ => Err(missing),
    }
}
