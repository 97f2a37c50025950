//! The limit settings of one level: the top level, a site or a location.
//!
//! A level that has any `limit_req` replaces the list it inherits, and the
//! same holds for `limit_conn`; every other setting is inherited unless the
//! level sets it.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{Level, LimitReqDirective};
//!
//! let server = Level::parse("limit_req zone=one burst=5; limit_req_status 429;").unwrap();
//! let location = Level::builder()
//!     .limit_req(LimitReqDirective::new("two").with_nodelay())
//!     .build()
//!     .unwrap()
//!     .inherit(&server);
//! assert_eq!(location.limit_req().len(), 1);
//! assert_eq!(location.limit_req()[0].zone(), "two");
//! assert_eq!(location.limit_req_status(), 429);
//! ```

use super::directive::{LimitConnDirective, LimitReqDirective};
use super::error::{ConfigError, ConfigErrorKind, Span};
use super::status::LogLevel;

/// The status of a refused request when none is set.
pub(crate) const DEFAULT_STATUS: u16 = 503;

/// The limit directives of one level; unset settings are inherited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Level {
    pub(crate) limit_req: Option<Vec<LimitReqDirective>>,
    pub(crate) limit_conn: Option<Vec<LimitConnDirective>>,
    pub(crate) limit_req_status: Option<u16>,
    pub(crate) limit_conn_status: Option<u16>,
    pub(crate) limit_req_dry_run: Option<bool>,
    pub(crate) limit_conn_dry_run: Option<bool>,
    pub(crate) limit_req_log_level: Option<LogLevel>,
    pub(crate) limit_conn_log_level: Option<LogLevel>,
}

impl Level {
    /// A builder for a level.
    pub fn builder() -> LevelBuilder {
        LevelBuilder::default()
    }

    /// This level with the settings it does not set taken from `parent`.
    #[must_use]
    pub fn inherit(&self, parent: &Level) -> Level {
        Level {
            limit_req: self.limit_req.clone().or_else(|| parent.limit_req.clone()),
            limit_conn: self
                .limit_conn
                .clone()
                .or_else(|| parent.limit_conn.clone()),
            limit_req_status: self.limit_req_status.or(parent.limit_req_status),
            limit_conn_status: self.limit_conn_status.or(parent.limit_conn_status),
            limit_req_dry_run: self.limit_req_dry_run.or(parent.limit_req_dry_run),
            limit_conn_dry_run: self.limit_conn_dry_run.or(parent.limit_conn_dry_run),
            limit_req_log_level: self.limit_req_log_level.or(parent.limit_req_log_level),
            limit_conn_log_level: self.limit_conn_log_level.or(parent.limit_conn_log_level),
        }
    }

    /// The `limit_req` directives, in order.
    pub fn limit_req(&self) -> &[LimitReqDirective] {
        self.limit_req.as_deref().unwrap_or(&[])
    }

    /// The `limit_conn` directives, in order.
    pub fn limit_conn(&self) -> &[LimitConnDirective] {
        self.limit_conn.as_deref().unwrap_or(&[])
    }

    /// `limit_req_status`, 503 by default.
    pub fn limit_req_status(&self) -> u16 {
        self.limit_req_status.unwrap_or(DEFAULT_STATUS)
    }

    /// `limit_conn_status`, 503 by default.
    pub fn limit_conn_status(&self) -> u16 {
        self.limit_conn_status.unwrap_or(DEFAULT_STATUS)
    }

    /// `limit_req_dry_run`, off by default.
    pub fn limit_req_dry_run(&self) -> bool {
        self.limit_req_dry_run.unwrap_or(false)
    }

    /// `limit_conn_dry_run`, off by default.
    pub fn limit_conn_dry_run(&self) -> bool {
        self.limit_conn_dry_run.unwrap_or(false)
    }

    /// `limit_req_log_level`, `error` by default.
    pub fn limit_req_log_level(&self) -> LogLevel {
        self.limit_req_log_level.unwrap_or_default()
    }

    /// `limit_conn_log_level`, `error` by default.
    pub fn limit_conn_log_level(&self) -> LogLevel {
        self.limit_conn_log_level.unwrap_or_default()
    }

    /// Appends a `limit_req`, refusing a zone already listed at this level.
    pub(crate) fn push_limit_req(&mut self, limit: LimitReqDirective) -> Result<(), ConfigError> {
        limit.validate()?;
        let list = self.limit_req.get_or_insert_with(Vec::new);
        if list.iter().any(|l| l.zone() == limit.zone()) {
            return Err(duplicate_zone("limit_req", limit.zone(), limit.span()));
        }
        list.push(limit);
        Ok(())
    }

    /// Appends a `limit_conn`, refusing a zone already listed at this level.
    pub(crate) fn push_limit_conn(&mut self, limit: LimitConnDirective) -> Result<(), ConfigError> {
        limit.validate()?;
        let list = self.limit_conn.get_or_insert_with(Vec::new);
        if list.iter().any(|l| l.zone() == limit.zone()) {
            return Err(duplicate_zone("limit_conn", limit.zone(), limit.span()));
        }
        list.push(limit);
        Ok(())
    }
}

fn duplicate_zone(directive: &str, zone: &str, span: Option<Span>) -> ConfigError {
    ConfigError::new(
        ConfigErrorKind::Duplicate,
        format!("zone \"{zone}\" is duplicate"),
    )
    .in_directive(directive)
    .at(span)
}

/// Checks a `limit_req_status` / `limit_conn_status` code: any 4xx or 5xx.
pub(crate) fn check_status(code: u16) -> Result<u16, ConfigError> {
    if (400..=599).contains(&code) {
        Ok(code)
    } else {
        Err(ConfigError::new(
            ConfigErrorKind::InvalidValue,
            format!("value must be between 400 and 599, not {code}"),
        ))
    }
}

/// Builds a [`Level`]; later calls to a setting replace earlier ones.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct LevelBuilder {
    limit_req: Vec<LimitReqDirective>,
    limit_conn: Vec<LimitConnDirective>,
    level: Level,
}

impl LevelBuilder {
    /// Adds a `limit_req`.
    pub fn limit_req(mut self, limit: LimitReqDirective) -> Self {
        self.limit_req.push(limit);
        self
    }

    /// Adds `limit_conn <zone> <max>`.
    pub fn limit_conn(mut self, zone: impl Into<String>, max: u32) -> Self {
        self.limit_conn.push(LimitConnDirective::new(zone, max));
        self
    }

    /// Sets `limit_req_status`.
    pub fn limit_req_status(mut self, code: u16) -> Self {
        self.level.limit_req_status = Some(code);
        self
    }

    /// Sets `limit_conn_status`.
    pub fn limit_conn_status(mut self, code: u16) -> Self {
        self.level.limit_conn_status = Some(code);
        self
    }

    /// Sets `limit_req_dry_run`.
    pub fn limit_req_dry_run(mut self, on: bool) -> Self {
        self.level.limit_req_dry_run = Some(on);
        self
    }

    /// Sets `limit_conn_dry_run`.
    pub fn limit_conn_dry_run(mut self, on: bool) -> Self {
        self.level.limit_conn_dry_run = Some(on);
        self
    }

    /// Sets `limit_req_log_level`.
    pub fn limit_req_log_level(mut self, level: LogLevel) -> Self {
        self.level.limit_req_log_level = Some(level);
        self
    }

    /// Sets `limit_conn_log_level`.
    pub fn limit_conn_log_level(mut self, level: LogLevel) -> Self {
        self.level.limit_conn_log_level = Some(level);
        self
    }

    /// The level.
    ///
    /// # Errors
    ///
    /// An invalid `limit_req` (see [`LimitReqDirective::validate`]) or
    /// `limit_conn`, a zone listed twice in one of them, or a status that is
    /// not 4xx or 5xx.
    pub fn build(self) -> Result<Level, ConfigError> {
        let mut level = self.level;
        for limit in self.limit_req {
            level.push_limit_req(limit)?;
        }
        for limit in self.limit_conn {
            level.push_limit_conn(limit)?;
        }
        if let Some(code) = level.limit_req_status {
            check_status(code).map_err(|e| e.in_directive("limit_req_status"))?;
        }
        if let Some(code) = level.limit_conn_status {
            check_status(code).map_err(|e| e.in_directive("limit_conn_status"))?;
        }
        Ok(level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_with_any_limit_replaces_the_inherited_list() {
        let parent = Level::builder()
            .limit_req(LimitReqDirective::new("a"))
            .limit_req(LimitReqDirective::new("b"))
            .limit_conn("c", 1)
            .limit_req_dry_run(true)
            .build()
            .expect("valid");
        let child = Level::builder()
            .limit_req(LimitReqDirective::new("d"))
            .build()
            .expect("valid");
        let merged = child.inherit(&parent);
        let zones: Vec<&str> = merged.limit_req().iter().map(|l| l.zone()).collect();
        assert_eq!(zones, ["d"]);
        assert_eq!(merged.limit_conn()[0].zone(), "c");
        assert!(merged.limit_req_dry_run());
        assert_eq!(
            Level::default()
                .inherit(&Level::default())
                .limit_req_status(),
            503
        );
    }

    #[test]
    fn statuses_must_be_4xx_or_5xx() {
        assert!(Level::builder().limit_req_status(399).build().is_err());
        assert!(Level::builder().limit_conn_status(600).build().is_err());
        assert!(Level::builder()
            .limit_req_status(429)
            .limit_conn_status(599)
            .build()
            .is_ok());
    }

    #[test]
    fn a_zone_listed_twice_in_one_level_is_an_error() {
        let err = Level::builder()
            .limit_conn("c", 1)
            .limit_conn("c", 2)
            .build()
            .expect_err("duplicate");
        assert_eq!(err.kind(), &ConfigErrorKind::Duplicate);
    }
}
