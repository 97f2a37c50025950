//! The drain rate of a limit_req zone, kept as nginx keeps it: in
//! milli-requests per second, so `1r/m` is `1000 / 60 = 16` (truncated).
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::Rate;
//! use std::num::NonZeroU32;
//!
//! assert_eq!(Rate::parse("10r/s").unwrap().milli_per_second(), 10_000);
//! assert_eq!(Rate::parse("1r/m").unwrap().milli_per_second(), 16);
//! let five = NonZeroU32::new(5).unwrap();
//! assert_eq!(Rate::per_second(five), Rate::parse("5r/s").unwrap());
//! ```

use std::fmt;
use std::num::NonZeroU32;

use super::error::{ConfigError, ConfigErrorKind};

/// Requests per second or per minute, stored in 1/1000 requests per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    requests: u32,
    per_minute: bool,
}

impl Rate {
    /// `n` requests per second (`nr/s`).
    pub const fn per_second(n: NonZeroU32) -> Self {
        Self {
            requests: n.get(),
            per_minute: false,
        }
    }

    /// `n` requests per minute (`nr/m`).
    pub const fn per_minute(n: NonZeroU32) -> Self {
        Self {
            requests: n.get(),
            per_minute: true,
        }
    }

    /// Parses `Nr/s` or `Nr/m`, as in `rate=10r/s`.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::InvalidValue`] for another unit, or a count that
    /// is not a positive whole number that fits in 32 bits.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let invalid = || {
            ConfigError::new(
                ConfigErrorKind::InvalidValue,
                format!("invalid rate \"{text}\""),
            )
        };
        let (digits, per_minute) = if let Some(d) = text.strip_suffix("r/s") {
            (d, false)
        } else if let Some(d) = text.strip_suffix("r/m") {
            (d, true)
        } else {
            return Err(invalid());
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let n: u32 = digits.parse().map_err(|_| invalid())?;
        let n = NonZeroU32::new(n).ok_or_else(invalid)?;
        Ok(if per_minute {
            Self::per_minute(n)
        } else {
            Self::per_second(n)
        })
    }

    /// The rate in 1/1000 requests per second, as nginx computes it:
    /// `requests * 1000 / 60` for a per-minute rate. Never 0.
    pub const fn milli_per_second(&self) -> u64 {
        let scale = if self.per_minute { 60 } else { 1 };
        let milli = self.requests as u64 * 1000 / scale;
        if milli == 0 {
            1
        } else {
            milli
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.per_minute { "r/m" } else { "r/s" };
        write!(f, "{}{unit}", self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_minute_rates_truncate_like_nginx() {
        assert_eq!(Rate::parse("30r/m").map(|r| r.milli_per_second()), Ok(500));
        assert_eq!(Rate::parse("7r/m").map(|r| r.milli_per_second()), Ok(116));
        assert_eq!(Rate::parse("1r/s").map(|r| r.milli_per_second()), Ok(1000));
    }

    #[test]
    fn malformed_rates_are_refused() {
        for bad in [
            "",
            "r/s",
            "0r/s",
            "-1r/s",
            "10",
            "10r/h",
            "1.5r/s",
            "99999999999r/s",
            "rate=1r/s",
        ] {
            assert!(Rate::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["10r/s", "30r/m"] {
            assert_eq!(
                Rate::parse(text).map(|r| r.to_string()).as_deref(),
                Ok(text)
            );
        }
    }
}
