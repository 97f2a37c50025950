//! The `limit_req` and `limit_conn` directives, as values.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{Delay, LimitReqDirective};
//!
//! let limit = LimitReqDirective::new("perip").with_burst(2).with_nodelay();
//! assert_eq!(limit.delay(), Delay::Nodelay);
//! assert!(limit.validate().is_ok());
//! // delay= cannot exceed the burst.
//! assert!(LimitReqDirective::new("perip").with_burst(2).with_delay(3).validate().is_err());
//! ```

use super::error::{ConfigError, ConfigErrorKind, Span};

/// How excess requests within the burst are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Delay {
    /// They wait for their turn at the rate (no `nodelay`, no `delay=`).
    #[default]
    Wait,
    /// `nodelay`: the whole burst passes at once.
    Nodelay,
    /// `delay=<n>`: the first `n` excess requests pass at once, the rest wait.
    After(u32),
}

/// A `limit_req zone=<name> [burst=<n>] [nodelay | delay=<n>];` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReqDirective {
    zone: String,
    burst: Option<u32>,
    delay: Delay,
    both_delay_forms: bool,
    span: Option<Span>,
}

impl LimitReqDirective {
    /// `limit_req zone=<zone>;`: no burst, every excess request is refused.
    pub fn new(zone: impl Into<String>) -> Self {
        Self {
            zone: zone.into(),
            burst: None,
            delay: Delay::Wait,
            both_delay_forms: false,
            span: None,
        }
    }

    /// `burst=<n>`: up to `n` excess requests are kept.
    #[must_use]
    pub fn with_burst(mut self, n: u32) -> Self {
        self.burst = Some(n);
        self
    }

    /// `nodelay`: the whole burst passes at once.
    #[must_use]
    pub fn with_nodelay(mut self) -> Self {
        self.both_delay_forms |= matches!(self.delay, Delay::After(_));
        self.delay = Delay::Nodelay;
        self
    }

    /// `delay=<n>`: the first `n` excess requests pass at once.
    #[must_use]
    pub fn with_delay(mut self, n: u32) -> Self {
        self.both_delay_forms |= self.delay == Delay::Nodelay;
        self.delay = Delay::After(n);
        self
    }

    pub(crate) fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// The zone name.
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// The burst in requests; 0 without `burst=`.
    pub fn burst(&self) -> u32 {
        self.burst.unwrap_or(0)
    }

    /// How excess requests are treated.
    pub fn delay(&self) -> Delay {
        self.delay
    }

    /// Where the directive was written, when it was parsed.
    pub fn span(&self) -> Option<Span> {
        self.span
    }

    /// Checks the burst and delay: `delay=` needs a burst, cannot exceed it,
    /// and cannot be combined with `nodelay`; both must be positive.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::InvalidValue`] naming the offending value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(ConfigError::new(ConfigErrorKind::InvalidValue, m));
        let result = match (self.burst, self.delay) {
            _ if self.zone.is_empty() => invalid("\"zone\" must name a zone".to_owned()),
            _ if self.both_delay_forms => {
                invalid("\"nodelay\" and \"delay=\" cannot be combined".to_owned())
            }
            (Some(0), _) => invalid("invalid burst value \"burst=0\"".to_owned()),
            (_, Delay::After(0)) => invalid("invalid delay value \"delay=0\"".to_owned()),
            (None, Delay::After(n)) => invalid(format!("\"delay={n}\" needs a burst")),
            (Some(b), Delay::After(n)) if n > b => {
                invalid(format!("\"delay={n}\" cannot exceed \"burst={b}\""))
            }
            _ => Ok(()),
        };
        result.map_err(|e: ConfigError| e.in_directive("limit_req").at(self.span))
    }

    /// The burst in 1/1000 requests, as nginx stores it.
    pub(crate) fn burst_milli(&self) -> u64 {
        u64::from(self.burst()) * 1000
    }

    /// The excess (1/1000 requests) that passes without waiting.
    pub(crate) fn delay_milli(&self) -> u64 {
        match self.delay {
            Delay::Wait => 0,
            Delay::Nodelay => u64::MAX,
            Delay::After(n) => u64::from(n) * 1000,
        }
    }
}

/// A `limit_conn <zone> <number>;` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitConnDirective {
    zone: String,
    max: u32,
    span: Option<Span>,
}

impl LimitConnDirective {
    /// Allows `max` requests in progress per key of `zone`.
    pub fn new(zone: impl Into<String>, max: u32) -> Self {
        Self {
            zone: zone.into(),
            max,
            span: None,
        }
    }

    pub(crate) fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// The zone name.
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// The requests in progress allowed per key.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Where the directive was written, when it was parsed.
    pub fn span(&self) -> Option<Span> {
        self.span
    }

    /// Checks that the number is between 1 and 65535, as nginx does.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::InvalidValue`] otherwise.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let result = if self.zone.is_empty() {
            Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                "the zone name is empty",
            ))
        } else if self.max == 0 {
            Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                "invalid number of connections \"0\"",
            ))
        } else if self.max > 65_535 {
            Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                "connection limit must be less 65536",
            ))
        } else {
            Ok(())
        };
        result.map_err(|e| e.in_directive("limit_conn").at(self.span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_needs_a_burst_cannot_exceed_it_and_excludes_nodelay() {
        let z = || LimitReqDirective::new("z");
        assert!(z().with_delay(1).validate().is_err());
        assert!(z().with_burst(3).with_delay(4).validate().is_err());
        assert!(z().with_burst(3).with_delay(3).validate().is_ok());
        assert!(z()
            .with_burst(3)
            .with_delay(1)
            .with_nodelay()
            .validate()
            .is_err());
        assert!(z()
            .with_burst(3)
            .with_nodelay()
            .with_delay(1)
            .validate()
            .is_err());
        assert!(z().with_burst(0).validate().is_err());
        assert!(z().with_burst(2).with_delay(0).validate().is_err());
        assert!(z().with_nodelay().validate().is_ok());
    }

    #[test]
    fn nginx_units_are_thousandths_and_nodelay_never_waits() {
        let l = LimitReqDirective::new("z").with_burst(5).with_delay(2);
        assert_eq!((l.burst_milli(), l.delay_milli()), (5000, 2000));
        assert_eq!(
            LimitReqDirective::new("z").with_nodelay().delay_milli(),
            u64::MAX
        );
        assert_eq!(LimitReqDirective::new("z").delay_milli(), 0);
    }

    #[test]
    fn limit_conn_numbers_are_one_to_65535() {
        assert!(LimitConnDirective::new("c", 0).validate().is_err());
        assert!(LimitConnDirective::new("c", 65_536).validate().is_err());
        assert!(LimitConnDirective::new("c", 65_535).validate().is_ok());
    }
}
