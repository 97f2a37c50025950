//! Every JSON line as serde_json reads it: any JSON, each field's raw text
//! first ([`RawValue`]), then that text as the type the field needs. The
//! reader of the lines [`super::scan`] leaves, and the reference it is
//! tested against.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::fields::{cased, float_ms, CowPairs, Fields, NO_TIME};
use crate::replay::log::LogError;
use crate::TimeUnit;

/// The same fields as serde_json reads them: any JSON, a field named twice
/// refused.
#[derive(Deserialize)]
struct Raw<'a> {
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

/// The fields of `line` as serde_json reads them: every line, slower.
pub(super) fn read_fields(line: &str) -> Result<Fields<'_>, LogError> {
    let r: Raw<'_> = serde_json::from_str(line).map_err(|_| LogError("not a JSON object"))?;
    fn given(raw: Option<&RawValue>) -> Option<&str> {
        raw.map(RawValue::get).filter(|t| *t != "null")
    }
    Ok(Fields {
        ip: given(r.ip),
        time: given(r.time),
        method: given(r.method),
        path: given(r.path),
        query: given(r.query),
        host: given(r.host),
        status: given(r.status),
        forwarded_for: given(r.forwarded_for),
        headers: given(r.headers),
        claims: given(r.claims),
        app: given(r.app),
    })
}

/// [`super::string`] as serde_json reads it.
pub(super) fn string_serde(raw: &str) -> Result<Cow<'_, str>, ()> {
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

/// [`super::strings`] as serde_json reads them.
pub(super) fn strings_serde<'a>(
    raw: &'a str,
    what: &'static str,
) -> Result<CowPairs<'a>, LogError> {
    let Pairs(pairs) = serde_json::from_str(raw).map_err(|_| LogError(what))?;
    Ok(pairs)
}

/// [`super::time`] as serde_json reads it: any JSON value.
pub(super) fn time_serde(raw: &str, unit: TimeUnit) -> Result<u64, LogError> {
    let missing = LogError(NO_TIME);
    let out_of_range = LogError(crate::time::number_error(unit));
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
            (None, Some(f)) => float_ms(f, unit).ok_or(out_of_range),
            _ => Err(out_of_range),
        },
        _ => Err(missing),
    }
}
