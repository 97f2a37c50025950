//! JSON lines: one object per line, its fields read where they lie (a
//! field's raw text first, then that text as the type the field needs), so
//! a well-formed line costs no allocation beyond its headers, and a bad
//! one names the field at fault.

use std::borrow::Cow;
use std::net::IpAddr;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::log::{split_target, LogError, LogLine};
use crate::TimeUnit;

/// The fields a line may have, each as its raw JSON text.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow)]
    ip: Option<&'a RawValue>,
    #[serde(borrow)]
    time: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    path: Option<&'a RawValue>,
    #[serde(borrow)]
    query: Option<&'a RawValue>,
    #[serde(borrow)]
    host: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    #[serde(borrow)]
    forwarded_for: Option<&'a RawValue>,
    #[serde(borrow)]
    headers: Option<&'a RawValue>,
    #[serde(borrow)]
    claims: Option<&'a RawValue>,
    #[serde(borrow)]
    app: Option<&'a RawValue>,
}

/// A field that is present and not `null`.
fn given(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get).filter(|t| *t != "null")
}

/// A string field: borrowed unless it has escapes; `Err` when it is not a
/// string.
fn string(raw: &str) -> Result<Cow<'_, str>, ()> {
    match serde_json::from_str::<&str>(raw) {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw)
            .map(Cow::Owned)
            .map_err(|_| ()),
    }
}

/// A string, borrowed from the line unless it has escapes.
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(s))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(s.to_owned()))
            }
        }
        d.deserialize_str(V).map(Str)
    }
}

/// Names and values, borrowed from the line where they can be.
type CowPairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// An object of strings, in order, each name in lower case.
struct Pairs<'a>(CowPairs<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CowPairs<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut m: M,
            ) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some((Str(k), Str(v))) = m.next_entry::<Str<'de>, Str<'de>>()? {
                    out.push((cased(k, false), v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V).map(Pairs)
    }
}

/// An object of strings, names in lower case (absent or `null`: none).
fn strings<'a>(raw: Option<&'a RawValue>, what: &'static str) -> Result<CowPairs<'a>, LogError> {
    let Some(raw) = given(raw) else {
        return Ok(Vec::new());
    };
    let Pairs(pairs) = serde_json::from_str(raw).map_err(|_| LogError(what))?;
    Ok(pairs)
}

/// A JSON-lines `time`: RFC 3339, or a Unix time in `unit`.
fn time(raw: Option<&RawValue>, unit: TimeUnit) -> Result<u64, LogError> {
    let missing = LogError("no \"time\" (RFC 3339, or a Unix time as a number)");
    let out_of_range = LogError(crate::time::number_error(unit));
    let Some(raw) = given(raw) else {
        return Err(missing);
    };
    let v: Value = serde_json::from_str(raw).map_err(|_| missing.clone())?;
    match v {
        Value::String(t) if t.contains(['-', '/']) && !t.starts_with('-') => {
            crate::time::rfc3339_ms(&t).ok_or(LogError(
                "\"time\" is not an RFC 3339 time from 1970 to 9999",
            ))
        }
        Value::String(t) if t.starts_with(|c: char| c.is_ascii_digit()) => {
            crate::time::epoch_ms(&t, unit).ok_or(out_of_range)
        }
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
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

/// `s` with ASCII letters in upper (`upper`) or lower case, borrowed when
/// it already is.
fn cased(s: Cow<'_, str>, upper: bool) -> Cow<'_, str> {
    let wrong = |b: &u8| {
        if upper {
            b.is_ascii_lowercase()
        } else {
            b.is_ascii_uppercase()
        }
    };
    if !s.as_bytes().iter().any(wrong) {
        return s;
    }
    Cow::Owned(if upper {
        s.to_ascii_uppercase()
    } else {
        s.to_ascii_lowercase()
    })
}

/// Parses one JSON line.
pub(super) fn parse(line: &str, unit: TimeUnit) -> Result<LogLine<'_>, LogError> {
    if !line.trim_start().starts_with('{') {
        return Err(LogError("not a JSON object"));
    }
    let f: Fields<'_> = serde_json::from_str(line).map_err(|_| LogError("not a JSON object"))?;
    let text = |raw| given(raw).and_then(|t| string(t).ok());
    let ip = text(f.ip).ok_or(LogError("no \"ip\" string"))?;
    let ip: IpAddr = ip.parse().map_err(|_| LogError("\"ip\" is not an IP"))?;
    let time_ms = time(f.time, unit)?;
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
    if let Some(raw) = given(f.forwarded_for) {
        let v = string(raw).map_err(|()| LogError("\"forwarded_for\" is not a string"))?;
        headers.push((Cow::Borrowed("x-forwarded-for"), v));
    }
    let claims = match given(f.claims) {
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
        status: given(f.status)
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
