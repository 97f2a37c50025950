//! A whole configuration: the zones and the top-level limit settings.
//!
//! Zones may appear anywhere in the top level, and each name is used once
//! across both kinds.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::NginxConfig;
//!
//! let pasted = NginxConfig::parse(
//!     "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\n\
//!      limit_conn_zone $binary_remote_addr zone=addr:10m;",
//! )
//! .unwrap();
//! let built = NginxConfig::builder()
//!     .limit_req_zone("one", "$client_ip", "10m", "1r/s")
//!     .limit_conn_zone("addr", "$client_ip", "10m")
//!     .build()
//!     .unwrap();
//! assert_eq!(pasted.zones()[0].key(), built.zones()[0].key());
//! assert_eq!(pasted.zones()[1].size(), built.zones()[1].size());
//! ```

use std::collections::HashMap;

use super::error::{ConfigError, ConfigErrorKind};
use super::key::KeyTemplate;
use super::level::Level;
use super::rate::Rate;
use super::size::ZoneSize;
use super::zone_spec::{ZoneKind, ZoneSpec};

/// Options for reading keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// More header names refused in keys (`redact_header`), beside the credential headers.
    pub redact_headers: Vec<String>,
}

impl ParseOptions {
    /// Also refuses header `name` in keys.
    #[must_use]
    pub fn with_redact_header(mut self, name: impl Into<String>) -> Self {
        self.redact_headers.push(name.into());
        self
    }
}

/// The zones and top-level settings of a configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NginxConfig {
    pub(crate) zones: Vec<ZoneSpec>,
    pub(crate) top: Level,
}

impl NginxConfig {
    /// A builder for a configuration.
    pub fn builder() -> NginxConfigBuilder {
        NginxConfigBuilder::default()
    }

    /// The zones, in the order they were defined.
    pub fn zones(&self) -> &[ZoneSpec] {
        &self.zones
    }

    /// The zone called `name`.
    pub fn zone(&self, name: &str) -> Option<&ZoneSpec> {
        self.zones.iter().find(|z| z.name() == name)
    }

    /// The limit settings written at the top level (inherited by every level).
    pub fn top(&self) -> &Level {
        &self.top
    }

    /// Checks that every limit of `level` names a zone of its kind.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::UnknownZone`] at the offending directive.
    pub fn check_level(&self, level: &Level) -> Result<(), ConfigError> {
        for limit in level.limit_req() {
            if !matches!(
                self.zone(limit.zone()).map(ZoneSpec::kind),
                Some(ZoneKind::Req(_))
            ) {
                return Err(unknown_zone("limit_req", limit.zone()).at(limit.span()));
            }
        }
        for limit in level.limit_conn() {
            if !matches!(
                self.zone(limit.zone()).map(ZoneSpec::kind),
                Some(ZoneKind::Conn)
            ) {
                return Err(unknown_zone("limit_conn", limit.zone()).at(limit.span()));
            }
        }
        Ok(())
    }

    /// Checks names, sizes and the top level.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let mut seen: HashMap<&str, &ZoneSpec> = HashMap::new();
        for zone in &self.zones {
            zone.validate()?;
            if let Some(first) = seen.insert(zone.name(), zone) {
                let at = first
                    .span()
                    .map(|s| format!(" (first defined at line {})", s.line()))
                    .unwrap_or_default();
                return Err(ConfigError::new(
                    ConfigErrorKind::DuplicateZone,
                    format!("zone \"{}\" is already defined{at}", zone.name()),
                )
                .in_directive(zone.directive())
                .at(zone.span()));
            }
        }
        self.check_level(&self.top)
    }
}

fn unknown_zone(directive: &str, zone: &str) -> ConfigError {
    let kind = if directive == "limit_req" {
        "limit_req_zone"
    } else {
        "limit_conn_zone"
    };
    ConfigError::new(
        ConfigErrorKind::UnknownZone,
        format!("unknown {kind} \"{zone}\""),
    )
    .in_directive(directive)
}

#[derive(Debug, Clone)]
enum PendingZone {
    Spec(ZoneSpec),
    Req {
        name: String,
        key: String,
        size: String,
        rate: String,
    },
    Conn {
        name: String,
        key: String,
        size: String,
    },
}

/// Builds a [`NginxConfig`] from the same values as the directives.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct NginxConfigBuilder {
    options: ParseOptions,
    zones: Vec<PendingZone>,
    top: Level,
}

impl NginxConfigBuilder {
    /// `limit_req_zone <key> zone=<name>:<size> rate=<rate>;`, read at [`build`](Self::build).
    pub fn limit_req_zone(mut self, name: &str, key: &str, size: &str, rate: &str) -> Self {
        self.zones.push(PendingZone::Req {
            name: name.to_owned(),
            key: key.to_owned(),
            size: size.to_owned(),
            rate: rate.to_owned(),
        });
        self
    }

    /// `limit_conn_zone <key> zone=<name>:<size>;`, read at [`build`](Self::build).
    pub fn limit_conn_zone(mut self, name: &str, key: &str, size: &str) -> Self {
        self.zones.push(PendingZone::Conn {
            name: name.to_owned(),
            key: key.to_owned(),
            size: size.to_owned(),
        });
        self
    }

    /// Adds an already built zone.
    pub fn zone(mut self, zone: ZoneSpec) -> Self {
        self.zones.push(PendingZone::Spec(zone));
        self
    }

    /// Also refuses header `name` in keys.
    pub fn redact_header(mut self, name: impl Into<String>) -> Self {
        self.options = self.options.with_redact_header(name);
        self
    }

    /// Sets the top-level limit settings.
    pub fn top(mut self, level: Level) -> Self {
        self.top = level;
        self
    }

    /// The configuration.
    ///
    /// # Errors
    ///
    /// An invalid key, size or rate; a size that holds no state; a zone
    /// name used twice; a top-level limit naming no zone of its kind.
    pub fn build(self) -> Result<NginxConfig, ConfigError> {
        let redact = &self.options.redact_headers;
        let mut zones = Vec::with_capacity(self.zones.len());
        for pending in self.zones {
            let zone = match pending {
                PendingZone::Spec(zone) => zone,
                PendingZone::Req {
                    name,
                    key,
                    size,
                    rate,
                } => (|| {
                    let key = KeyTemplate::parse_with_redact(&key, redact)?;
                    Ok(ZoneSpec::limit_req(
                        name,
                        key,
                        ZoneSize::parse(&size)?,
                        Rate::parse(&rate)?,
                    ))
                })()
                .map_err(|e: ConfigError| e.in_directive("limit_req_zone"))?,
                PendingZone::Conn { name, key, size } => (|| {
                    let key = KeyTemplate::parse_with_redact(&key, redact)?;
                    Ok(ZoneSpec::limit_conn(name, key, ZoneSize::parse(&size)?))
                })()
                .map_err(|e: ConfigError| e.in_directive("limit_conn_zone"))?,
            };
            zones.push(zone);
        }
        let config = NginxConfig {
            zones,
            top: self.top,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LimitReqDirective;

    #[test]
    fn each_zone_name_is_used_once_across_both_kinds() {
        let err = NginxConfig::builder()
            .limit_req_zone("z", "$client_ip", "1m", "1r/s")
            .limit_conn_zone("z", "$client_ip", "1m")
            .build()
            .expect_err("duplicate");
        assert_eq!(err.kind(), &ConfigErrorKind::DuplicateZone);
        assert_eq!(err.directive(), Some("limit_conn_zone"));
    }

    #[test]
    fn a_limit_must_name_a_zone_of_its_own_kind() {
        let top = Level::builder()
            .limit_req(LimitReqDirective::new("c"))
            .build()
            .expect("level");
        let err = NginxConfig::builder()
            .limit_conn_zone("c", "$client_ip", "1m")
            .top(top)
            .build()
            .expect_err("wrong kind");
        assert_eq!(err.kind(), &ConfigErrorKind::UnknownZone);
        assert_eq!(err.message(), "unknown limit_req_zone \"c\"");
    }

    #[test]
    fn builder_errors_name_the_directive() {
        let err = NginxConfig::builder()
            .redact_header("x-session")
            .limit_req_zone("a", "$http_x_session", "1m", "1r/s")
            .build()
            .expect_err("redacted");
        assert_eq!(err.kind(), &ConfigErrorKind::CredentialInKey);
        assert_eq!(err.directive(), Some("limit_req_zone"));
        let err = NginxConfig::builder()
            .limit_conn_zone("a", "$client_ip", "63")
            .build()
            .expect_err("too small");
        assert_eq!(err.kind(), &ConfigErrorKind::ZoneSize);
    }
}
