//! The subject a rule gives a request: the rule's key parts, read from the
//! request and hashed to a fixed-size digest (the rule's key spec is
//! [`KeyPart`], in `rules/parts.rs`; where the subject's state lives is
//! `state_address.rs`).
//!
//! Every part is written as a tag, a length and the value, so no two
//! different keys share an encoding. What each part reads, IPv6 per /64,
//! the first of repeated values, empty values counted as missing and the
//! fallback key's own namespace are described in the guide's
//! [Keys](crate::guide::rules#keys) section.
//!
//! The one function here, [`subject`], is for tools and backends that
//! cross-check stored keys under a hash key they know; under a limiter's own
//! key, [`Limiter::subject_of`](crate::Limiter::subject_of) gives the same.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::backend::{subject, KeyOutcome};
//! use ratelimit_core::rules::RuleBuilder;
//! use ratelimit_core::{HashKey, RequestAttrs};
//! use std::time::Duration;
//!
//! let rule = RuleBuilder::new("api").fixed_window(5, Duration::from_secs(60))
//!     .key(["ip", "header:x-tenant"]).build().unwrap();
//! let a = RequestAttrs::new("2001:db8::1".parse().unwrap()).with_header("x-tenant", "acme");
//! let b = RequestAttrs::new("2001:db8::2".parse().unwrap()).with_header("x-tenant", "acme");
//! // Same /64, same tenant: the same subject.
//! assert_eq!(subject(&rule, &a, &HashKey::DEFAULT, false), subject(&rule, &b, &HashKey::DEFAULT, false));
//! ```

use std::borrow::Cow;
use std::net::IpAddr;

use crate::cidr::ip_bytes;
use crate::hash::Sip128;
use crate::rules::{DistinctOf, KeyPart, OnMissingKey, Rule};
#[cfg(test)]
use crate::RequestAttrs;
use crate::{HashKey, KeyDigest, RequestView, ViewerFact};

/// What a rule's key comes to for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyOutcome {
    /// The subject to count.
    Subject(KeyDigest),
    /// A part is missing and the rule says `skip`.
    Skip,
    /// A part is missing and the rule says `reject` (400).
    Reject,
}

const FALLBACK_TAG: u8 = 0xFF;

/// Writes a part: its tag, its length (4 bytes, little-endian), its value.
fn push(h: &mut Sip128, tag: u8, value: &[u8]) {
    push_head(h, tag, value.len());
    h.write(value);
}

/// A part's tag and length, as two short writes (a byte and a number: no
/// byte-by-byte buffering in the hasher).
fn push_head(h: &mut Sip128, tag: u8, len: usize) {
    h.write_u8(tag);
    h.write_u32(len as u32);
}

/// Reads one part; `None` when the request does not carry it.
fn part_value<'r>(
    part: &KeyPart,
    req: &'r dyn RequestView,
    jwt_off: bool,
) -> Option<PartValue<'r>> {
    Some(match part {
        KeyPart::Ip => {
            let (b, n) = ip_bytes(req.client_ip());
            PartValue::Inline(b, n)
        }
        KeyPart::JwtClaim(n) if !jwt_off => {
            PartValue::Bytes(present(req.jwt_claim(n)?.as_bytes())?)
        }
        KeyPart::JwtClaim(_) => return None,
        KeyPart::Header(n) => PartValue::Bytes(present(req.header(n)?)?),
        KeyPart::Cookie(n) => PartValue::Bytes(present(req.cookie(n)?)?),
        KeyPart::Query(n) => {
            let v = req.query_arg_bytes(n)?;
            present(&v)?;
            PartValue::Cow(v)
        }
        KeyPart::Host => PartValue::Bytes(req.host().as_bytes()),
        KeyPart::Method => PartValue::Bytes(req.method().as_bytes()),
        KeyPart::Country => PartValue::Bytes(req.viewer(ViewerFact::Country)?.as_bytes()),
        KeyPart::Asnum => PartValue::Bytes(req.viewer(ViewerFact::Asnum)?.as_bytes()),
        KeyPart::Ja4 => PartValue::Bytes(req.viewer(ViewerFact::Ja4)?.as_bytes()),
        KeyPart::Locale => PartValue::Bytes(req.viewer(ViewerFact::Locale)?.as_bytes()),
        KeyPart::App(n) => PartValue::Bytes(req.app_value(n)?.as_bytes()),
        KeyPart::Constant => PartValue::Bytes(b""),
    })
}

/// The value key part `part` reads from `req`, as text (lossy), for
/// explanations: `None` when missing. An address is written whole; the
/// key uses its IPv6 /64.
pub(crate) fn part_text(part: &KeyPart, req: &dyn RequestView, jwt_off: bool) -> Option<String> {
    let v = part_value(part, req, jwt_off)?;
    Some(match (part, v) {
        (KeyPart::Ip, _) => req.client_ip().to_string(),
        (_, v) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
    })
}

/// `value`, unless it is empty or only whitespace: then missing.
fn present(value: &[u8]) -> Option<&[u8]> {
    (!value.iter().all(u8::is_ascii_whitespace)).then_some(value)
}

enum PartValue<'r> {
    Bytes(&'r [u8]),
    Cow(Cow<'r, [u8]>),
    Inline([u8; 8], usize),
}

impl PartValue<'_> {
    fn as_bytes(&self) -> &[u8] {
        match self {
            PartValue::Bytes(b) => b,
            PartValue::Cow(v) => v,
            PartValue::Inline(b, n) => &b[..*n],
        }
    }
}

/// A part's tag: one per kind of part, never 0 nor [`FALLBACK_TAG`],
/// each pinned in `known_digests.rs` (the match is exhaustive: a new kind
/// of part must be given its own).
fn tag(part: &KeyPart) -> u8 {
    match part {
        KeyPart::Ip => 1,
        KeyPart::JwtClaim(_) => 2,
        KeyPart::Header(_) => 3,
        KeyPart::Cookie(_) => 4,
        KeyPart::Query(_) => 5,
        KeyPart::Host => 6,
        KeyPart::Method => 7,
        KeyPart::Country => 8,
        KeyPart::Asnum => 9,
        KeyPart::Ja4 => 10,
        KeyPart::Locale => 11,
        KeyPart::App(_) => 12,
        KeyPart::Constant => 13,
    }
}

/// The subject of a key that is the client address alone (`["ip"]`): the
/// same digest as [`subject`] gives for it (the part's tag, its length and
/// the address bytes), written as one 8-byte word and the rest into a new
/// hasher, whose position is then known where this is inlined (no
/// buffering of short writes to track).
#[inline]
pub(crate) fn ip_subject(key: &HashKey, ip: IpAddr) -> KeyDigest {
    let (b, n) = ip_bytes(ip);
    let mut h = key.hasher();
    // tag (1 byte), length (4 bytes, little-endian), the first 3 bytes.
    let head = [tag(&KeyPart::Ip), n as u8, 0, 0, 0, b[0], b[1], b[2]];
    h.write_u64(u64::from_le_bytes(head));
    if n == 8 {
        h.write_u32(u32::from_le_bytes([b[3], b[4], b[5], b[6]]));
        h.write_u8(b[7]);
    } else {
        h.write_u8(b[3]);
    }
    h.finish128()
}

/// The subject of `rule` for `req`. With `jwt_off` (the emergency switch)
/// every claim counts as missing.
pub fn subject(rule: &Rule, req: &dyn RequestView, key: &HashKey, jwt_off: bool) -> KeyOutcome {
    subject_after(rule, req, key, jwt_off, &mut None, false)
}

/// The hasher after the whole key of a rule decided earlier in the same
/// request (same request, hash key and JWT switch): a later rule whose key
/// starts with the same parts continues from it instead of hashing those
/// bytes again (two rules keyed on `ip` share the whole digest).
pub(crate) struct KeyPrefix<'r> {
    parts: &'r [KeyPart],
    hasher: Sip128,
    /// The digest of exactly these parts.
    digest: KeyDigest,
    /// The JWT switch they were read under (it may flip mid-request).
    jwt_off: bool,
}

/// [`subject`], continuing from `prefix` when `rule`'s key starts with its
/// parts; with `keep` (another rule's key starts with this one's),
/// `prefix` then holds this rule's key when every part was present.
pub(crate) fn subject_after<'r>(
    rule: &'r Rule,
    req: &dyn RequestView,
    key: &HashKey,
    jwt_off: bool,
    prefix: &mut Option<KeyPrefix<'r>>,
    keep: bool,
) -> KeyOutcome {
    let (mut h, done) = match prefix {
        Some(p) if p.jwt_off != jwt_off => (key.hasher(), 0),
        // The same key: the same subject.
        Some(p) if *rule.key == *p.parts => return KeyOutcome::Subject(p.digest),
        Some(p) if rule.key.starts_with(p.parts) => (p.hasher.clone(), p.parts.len()),
        _ => (key.hasher(), 0),
    };
    for part in &rule.key[done..] {
        let Some(v) = part_value(part, req, jwt_off) else {
            return match rule.on_missing_key {
                OnMissingKey::Skip => KeyOutcome::Skip,
                OnMissingKey::Reject => KeyOutcome::Reject,
                _ => KeyOutcome::Subject(fallback(req, key)),
            };
        };
        write_part(&mut h, part, v);
    }
    if !keep {
        return KeyOutcome::Subject(h.finish128());
    }
    let digest = h.clone().finish128();
    *prefix = Some(KeyPrefix {
        parts: &rule.key,
        hasher: h,
        digest,
        jwt_off,
    });
    KeyOutcome::Subject(digest)
}

/// Writes one present part: the name of a named part, then the value.
fn write_part(h: &mut Sip128, part: &KeyPart, v: PartValue<'_>) {
    if let KeyPart::Header(n)
    | KeyPart::Cookie(n)
    | KeyPart::Query(n)
    | KeyPart::JwtClaim(n)
    | KeyPart::App(n) = part
    {
        push(h, 0, n.as_bytes());
    }
    match v {
        // An address (4 or 8 bytes): one short write.
        PartValue::Inline(b, n @ (4 | 8)) => {
            push_head(h, tag(part), n);
            let mut lo = [0u8; 4];
            lo.copy_from_slice(&b[..4]);
            match n {
                4 => h.write_u32(u32::from_le_bytes(lo)),
                _ => h.write_u64(u64::from_le_bytes(b)),
            }
        }
        _ => push(h, tag(part), v.as_bytes()),
    }
}

/// The fallback subject: the client IP, in a namespace of its own.
pub(crate) fn fallback(req: &dyn RequestView, key: &HashKey) -> KeyDigest {
    let (b, n) = ip_bytes(req.client_ip());
    let mut h = key.hasher();
    push(&mut h, FALLBACK_TAG, &b[..n]);
    h.finish128()
}

/// The value a `distinct` rule counts, if the request has it.
/// Borrowed when the request holds it as it is (an application value, a
/// path already normalized, a query argument without escapes).
pub(crate) fn distinct_value<'r>(
    of: &DistinctOf,
    req: &'r dyn RequestView,
) -> Option<Cow<'r, [u8]>> {
    Some(match of {
        DistinctOf::Path => crate::normalize::normalize_path(req.path().as_bytes()),
        DistinctOf::Query(n) => req.query_arg_bytes(n)?,
        DistinctOf::Ip => {
            let (b, n) = ip_bytes(req.client_ip());
            Cow::Owned(b[..n].to_vec())
        }
        DistinctOf::Asnum => Cow::Borrowed(req.viewer(ViewerFact::Asnum)?.as_bytes()),
        DistinctOf::Ja4 => Cow::Borrowed(req.viewer(ViewerFact::Ja4)?.as_bytes()),
        DistinctOf::App(n) => Cow::Borrowed(req.app_value(n)?.as_bytes()),
    })
}

/// The normalized path (as `distinct` counts it), as bytes: percent-decoded (bytes that are not
/// UTF-8 stay apart), `.` and `..` segments resolved, repeated slashes
/// collapsed, so `/a//b/../c` and `/a/c` are one value. The same
/// normalization as nginx's `$path` ([`crate::normalize::normalize_path`]).
#[cfg(test)]
pub(crate) fn normalize_path(path: &str) -> Vec<u8> {
    crate::normalize::normalize_path(path.as_bytes()).into_owned()
}

pub(crate) mod label;
#[cfg(test)]
mod tests;
