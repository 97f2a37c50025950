//! What both readers of a JSON line share: the fields' raw texts they
//! find, and how a field's text becomes what the request holds.

use std::borrow::Cow;

use crate::TimeUnit;

/// The fields a line may have, each as its raw JSON text (`null`: none).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fields<'a> {
    pub(super) ip: Option<&'a str>,
    pub(super) time: Option<&'a str>,
    pub(super) method: Option<&'a str>,
    pub(super) path: Option<&'a str>,
    pub(super) query: Option<&'a str>,
    pub(super) host: Option<&'a str>,
    pub(super) status: Option<&'a str>,
    pub(super) forwarded_for: Option<&'a str>,
    pub(super) headers: Option<&'a str>,
    pub(super) claims: Option<&'a str>,
    pub(super) app: Option<&'a str>,
}

impl<'a> Fields<'a> {
    /// The number of the field named `name`, for [`Fields::slot`].
    #[inline]
    pub(super) fn index(name: &str) -> Option<usize> {
        Some(match name {
            "ip" => 0,
            "time" => 1,
            "method" => 2,
            "path" => 3,
            "query" => 4,
            "host" => 5,
            "status" => 6,
            "forwarded_for" => 7,
            "headers" => 8,
            "claims" => 9,
            "app" => 10,
            _ => return None,
        })
    }

    /// The field numbered `i` by [`Fields::index`].
    #[inline]
    pub(super) fn slot(&mut self, i: usize) -> &mut Option<&'a str> {
        match i {
            0 => &mut self.ip,
            1 => &mut self.time,
            2 => &mut self.method,
            3 => &mut self.path,
            4 => &mut self.query,
            5 => &mut self.host,
            6 => &mut self.status,
            7 => &mut self.forwarded_for,
            8 => &mut self.headers,
            9 => &mut self.claims,
            _ => &mut self.app,
        }
    }
}

/// Names and values, borrowed from the line where they can be.
pub(super) type CowPairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// Why a line has no time.
pub(super) const NO_TIME: &str = "no \"time\" (RFC 3339, or a Unix time as a number)";

/// A time written as a JSON number that is not a whole one, in `unit`:
/// Unix milliseconds (cut to the millisecond), if from 1970 to 9999.
#[inline]
pub(super) fn float_ms(f: f64, unit: TimeUnit) -> Option<u64> {
    if !f.is_finite() || f < 0.0 {
        return None;
    }
    let ms = match unit {
        TimeUnit::Ms => f,
        _ => f * 1000.0,
    };
    (ms <= crate::time::MAX_MS as f64).then_some(ms as u64)
}

/// `s` with ASCII letters in upper (`upper`) or lower case, borrowed when
/// it already is.
#[inline]
pub(super) fn cased(s: Cow<'_, str>, upper: bool) -> Cow<'_, str> {
    // One loop for each case: the test is not made again for every byte.
    let wrong = if upper {
        s.bytes().any(|b| b.is_ascii_lowercase())
    } else {
        s.bytes().any(|b| b.is_ascii_uppercase())
    };
    if !wrong {
        return s;
    }
    Cow::Owned(if upper {
        s.to_ascii_uppercase()
    } else {
        s.to_ascii_lowercase()
    })
}
