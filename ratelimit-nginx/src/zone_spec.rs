//! `limit_req_zone` and `limit_conn_zone` definitions, as values.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{KeyTemplate, Rate, ZoneKind, ZoneSize, ZoneSpec};
//!
//! let key = KeyTemplate::parse("$client_ip").unwrap();
//! let zone = ZoneSpec::limit_req("perip", key, ZoneSize::mebibytes(10), Rate::parse("10r/s").unwrap());
//! assert_eq!(zone.directive(), "limit_req_zone");
//! assert!(matches!(zone.kind(), ZoneKind::Req(_)));
//! assert!(zone.validate().is_ok());
//! ```

use super::error::{ConfigError, ConfigErrorKind, Span};
use super::key::KeyTemplate;
use super::rate::Rate;
use super::size::{ZoneSize, CONN_STATE_BYTES, REQ_STATE_BYTES};

/// The kind of a zone, with its rate for limit_req.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ZoneKind {
    /// `limit_req_zone`: a leaky bucket per key, draining at the rate.
    Req(Rate),
    /// `limit_conn_zone`: requests in progress per key.
    Conn,
}

/// A `limit_req_zone` or `limit_conn_zone` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneSpec {
    name: String,
    kind: ZoneKind,
    key: KeyTemplate,
    size: ZoneSize,
    span: Option<Span>,
}

impl ZoneSpec {
    /// `limit_req_zone <key> zone=<name>:<size> rate=<rate>;`
    pub fn limit_req(
        name: impl Into<String>,
        key: KeyTemplate,
        size: ZoneSize,
        rate: Rate,
    ) -> Self {
        Self {
            name: name.into(),
            kind: ZoneKind::Req(rate),
            key,
            size,
            span: None,
        }
    }

    /// `limit_conn_zone <key> zone=<name>:<size>;`
    pub fn limit_conn(name: impl Into<String>, key: KeyTemplate, size: ZoneSize) -> Self {
        Self {
            name: name.into(),
            kind: ZoneKind::Conn,
            key,
            size,
            span: None,
        }
    }

    pub(crate) fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// The zone name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kind, with the rate of a limit_req zone.
    pub fn kind(&self) -> ZoneKind {
        self.kind
    }

    /// The key.
    pub fn key(&self) -> &KeyTemplate {
        &self.key
    }

    /// The size.
    pub fn size(&self) -> ZoneSize {
        self.size
    }

    /// Where the zone was defined, when it was parsed.
    pub fn span(&self) -> Option<Span> {
        self.span
    }

    /// `limit_req_zone` or `limit_conn_zone`.
    pub fn directive(&self) -> &'static str {
        match self.kind {
            ZoneKind::Req(_) => "limit_req_zone",
            ZoneKind::Conn => "limit_conn_zone",
        }
    }

    /// Checks the name and that the size holds at least one state.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::InvalidValue`] for an empty name,
    /// [`ConfigErrorKind::ZoneSize`] for a size that holds no state.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let state_bytes = match self.kind {
            ZoneKind::Req(_) => REQ_STATE_BYTES,
            ZoneKind::Conn => CONN_STATE_BYTES,
        };
        let result = if self.name.is_empty() {
            Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                "the zone name is empty",
            ))
        } else {
            self.size.validate_for(state_bytes).map(|_| ())
        };
        result.map_err(|e| e.in_directive(self.directive()).at(self.span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_that_holds_no_state_is_an_error() {
        let key = KeyTemplate::parse("$client_ip").expect("key");
        let rate = Rate::parse("1r/s").expect("rate");
        assert!(
            ZoneSpec::limit_req("a", key.clone(), ZoneSize::from_bytes(127), rate)
                .validate()
                .is_err()
        );
        assert!(
            ZoneSpec::limit_req("a", key.clone(), ZoneSize::from_bytes(128), rate)
                .validate()
                .is_ok()
        );
        assert!(
            ZoneSpec::limit_conn("a", key.clone(), ZoneSize::from_bytes(63))
                .validate()
                .is_err()
        );
        assert!(ZoneSpec::limit_conn("", key, ZoneSize::from_bytes(64))
            .validate()
            .is_err());
    }
}
