//! `$limit_req_status`, `$limit_conn_status`, log levels and the record of a refusal.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{LimitReqStatus, LogLevel};
//!
//! let worst = LimitReqStatus::Passed.worst(LimitReqStatus::Delayed);
//! assert_eq!(worst.as_str(), "DELAYED");
//! // Delays are logged one level below refusals, as nginx does.
//! assert_eq!(LogLevel::Error.delay_level(), LogLevel::Warn);
//! assert_eq!(LogLevel::Notice.tracing_level(), tracing::Level::INFO);
//! ```

use std::fmt;

use super::error::{ConfigError, ConfigErrorKind};

/// The outcome of limit_req for a request, ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LimitReqStatus {
    /// Within the rate.
    Passed,
    /// Would have waited, but the limit is a dry run.
    DelayedDryRun,
    /// Waited for its turn at the rate.
    Delayed,
    /// Would have been refused, but the limit is a dry run.
    RejectedDryRun,
    /// Refused.
    Rejected,
}

impl LimitReqStatus {
    /// Counts the outcome in `ratelimit_nginx_limit_req_total`.
    pub(crate) fn counted(self) -> Self {
        metrics::counter!("ratelimit_nginx_limit_req_total", "status" => self.as_str())
            .increment(1);
        self
    }

    /// The value of `$limit_req_status`, such as `REJECTED_DRY_RUN`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Passed => "PASSED",
            Self::DelayedDryRun => "DELAYED_DRY_RUN",
            Self::Delayed => "DELAYED",
            Self::RejectedDryRun => "REJECTED_DRY_RUN",
            Self::Rejected => "REJECTED",
        }
    }

    /// The worse of two outcomes, for a request that several zones apply to.
    #[must_use]
    pub fn worst(self, other: Self) -> Self {
        self.max(other)
    }
}

impl fmt::Display for LimitReqStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of limit_conn for a request, ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LimitConnStatus {
    /// Counted and allowed.
    Passed,
    /// Would have been refused, but the limit is a dry run.
    RejectedDryRun,
    /// Refused.
    Rejected,
}

impl LimitConnStatus {
    /// Counts the outcome in `ratelimit_nginx_limit_conn_total`.
    pub(crate) fn counted(self) -> Self {
        metrics::counter!("ratelimit_nginx_limit_conn_total", "status" => self.as_str())
            .increment(1);
        self
    }

    /// The value of `$limit_conn_status`, such as `PASSED`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Passed => "PASSED",
            Self::RejectedDryRun => "REJECTED_DRY_RUN",
            Self::Rejected => "REJECTED",
        }
    }

    /// The worse of two outcomes.
    #[must_use]
    pub fn worst(self, other: Self) -> Self {
        self.max(other)
    }
}

impl fmt::Display for LimitConnStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error-log severity of limit events: `limit_req_log_level` and `limit_conn_log_level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum LogLevel {
    /// `info`.
    Info,
    /// `notice`, written at tracing's INFO (there is no notice level).
    Notice,
    /// `warn`.
    Warn,
    /// `error`, the default.
    #[default]
    Error,
}

impl LogLevel {
    /// Parses `info`, `notice`, `warn` or `error`.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::InvalidValue`] for any other word.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        match text {
            "info" => Ok(Self::Info),
            "notice" => Ok(Self::Notice),
            "warn" => Ok(Self::Warn),
            "error" => Ok(Self::Error),
            _ => Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                format!("invalid value \"{text}\", it must be \"info\", \"notice\", \"warn\" or \"error\""),
            )),
        }
    }

    /// The level of delay events: one level lower, and `info` stays `info`.
    pub const fn delay_level(&self) -> Self {
        match self {
            Self::Error => Self::Warn,
            Self::Warn => Self::Notice,
            Self::Notice | Self::Info => Self::Info,
        }
    }

    /// The tracing level the event is written at.
    pub const fn tracing_level(&self) -> tracing::Level {
        match self {
            Self::Error => tracing::Level::ERROR,
            Self::Warn => tracing::Level::WARN,
            Self::Notice | Self::Info => tracing::Level::INFO,
        }
    }

    /// The nginx name of the level.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// Which module refused a request: the access log's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitKind {
    /// `limit_req`.
    Req,
    /// `limit_conn`.
    Conn,
}

impl LimitKind {
    /// `limit_req` or `limit_conn`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Req => "limit_req",
            Self::Conn => "limit_conn",
        }
    }
}

/// A refused request: the status it gets and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRejected {
    kind: LimitKind,
    zone: String,
    status: u16,
    zone_exhausted: bool,
}

impl LimitRejected {
    pub(crate) fn new(kind: LimitKind, zone: &str, status: u16, zone_exhausted: bool) -> Self {
        Self {
            kind,
            zone: zone.to_owned(),
            status,
            zone_exhausted,
        }
    }

    /// `limit_req` or `limit_conn`.
    pub fn kind(&self) -> LimitKind {
        self.kind
    }

    /// The zone that refused.
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// The configured status (`limit_req_status` / `limit_conn_status`).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// True when the zone had no free state, rather than an ordinary excess.
    pub fn zone_exhausted(&self) -> bool {
        self.zone_exhausted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_orders_rejections_above_delays_above_passes() {
        use LimitReqStatus::*;
        assert_eq!(Passed.worst(DelayedDryRun), DelayedDryRun);
        assert_eq!(Delayed.worst(DelayedDryRun), Delayed);
        assert_eq!(Delayed.worst(RejectedDryRun), RejectedDryRun);
        assert_eq!(Rejected.worst(RejectedDryRun), Rejected);
        assert_eq!(
            LimitConnStatus::Passed
                .worst(LimitConnStatus::RejectedDryRun)
                .as_str(),
            "REJECTED_DRY_RUN"
        );
    }

    #[test]
    fn delays_are_logged_one_level_lower_and_notice_is_info() {
        assert_eq!(LogLevel::Warn.delay_level(), LogLevel::Notice);
        assert_eq!(LogLevel::Info.delay_level(), LogLevel::Info);
        assert_eq!(
            LogLevel::Warn.delay_level().tracing_level(),
            tracing::Level::INFO
        );
        assert_eq!(
            LogLevel::Error.delay_level().tracing_level(),
            tracing::Level::WARN
        );
    }

    #[test]
    fn log_levels_parse_the_four_nginx_names() {
        for l in [
            LogLevel::Info,
            LogLevel::Notice,
            LogLevel::Warn,
            LogLevel::Error,
        ] {
            assert_eq!(LogLevel::parse(l.as_str()), Ok(l));
        }
        assert!(LogLevel::parse("debug").is_err());
        assert_eq!(LogLevel::default(), LogLevel::Error);
    }
}
