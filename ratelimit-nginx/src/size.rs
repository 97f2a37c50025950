//! Zone sizes in bytes, written as nginx writes them: `10m`, `64k`, `1g` or plain bytes.
//!
//! A limit_req zone holds `size / 128` states and a limit_conn zone
//! `size / 64`, the sizes of nginx's states.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::ZoneSize;
//!
//! let size = ZoneSize::parse("10m").unwrap();
//! assert_eq!(size.bytes(), 10 * 1024 * 1024);
//! assert_eq!(size.req_states(), 81_920);
//! assert_eq!(size.conn_states(), 163_840);
//! assert!(ZoneSize::parse("10x").is_err());
//! ```

use std::fmt;

use super::error::{ConfigError, ConfigErrorKind};

/// The bytes one limit_req state is allowed to use.
pub(crate) const REQ_STATE_BYTES: u64 = 128;

/// The bytes one limit_conn state is allowed to use.
pub(crate) const CONN_STATE_BYTES: u64 = 64;

/// The largest zone: 4 GiB, so that a typo cannot reserve the machine's memory.
pub(crate) const MAX_ZONE_BYTES: u64 = 4 << 30;

/// The configured memory of a zone, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZoneSize(u64);

impl ZoneSize {
    /// A size of `bytes` bytes; a zone of a size that holds no state, or is
    /// over 4 GiB, is refused when its directive is read.
    pub const fn from_bytes(bytes: u64) -> Self {
        Self(bytes)
    }

    /// A size of `n` KiB (nginx `k`).
    pub const fn kibibytes(n: u32) -> Self {
        Self((n as u64) << 10)
    }

    /// A size of `n` MiB (nginx `m`).
    pub const fn mebibytes(n: u32) -> Self {
        Self((n as u64) << 20)
    }

    /// Parses `10m`, `64k`, `1g` (either case) or a plain number of bytes.
    ///
    /// # Errors
    ///
    /// An empty value, a value that is not a number with an optional unit,
    /// or one that overflows, is [`ConfigErrorKind::InvalidValue`].
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let invalid = || {
            ConfigError::new(
                ConfigErrorKind::InvalidValue,
                format!("invalid zone size \"{text}\""),
            )
        };
        let (digits, scale) = match text.as_bytes().last() {
            Some(b'k' | b'K') => (&text[..text.len() - 1], 1u64 << 10),
            Some(b'm' | b'M') => (&text[..text.len() - 1], 1 << 20),
            Some(b'g' | b'G') => (&text[..text.len() - 1], 1 << 30),
            Some(_) => (text, 1),
            None => return Err(invalid()),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let n: u64 = digits.parse().map_err(|_| invalid())?;
        n.checked_mul(scale).map(Self).ok_or_else(invalid)
    }

    /// The size in bytes.
    pub const fn bytes(&self) -> u64 {
        self.0
    }

    /// How many limit_req states fit: `bytes / 128`.
    pub const fn req_states(&self) -> u64 {
        self.0 / REQ_STATE_BYTES
    }

    /// How many limit_conn states fit: `bytes / 64`.
    pub const fn conn_states(&self) -> u64 {
        self.0 / CONN_STATE_BYTES
    }

    /// The number of states for a zone whose states use `state_bytes`.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::ZoneSize`] when no state fits, or the size is over
    /// [`MAX_ZONE_BYTES`] (4 GiB).
    pub(crate) fn validate_for(&self, state_bytes: u64) -> Result<u32, ConfigError> {
        if self.0 > MAX_ZONE_BYTES {
            return Err(ConfigError::new(
                ConfigErrorKind::ZoneSize,
                format!("zone size {self} is larger than the maximum of 4g"),
            ));
        }
        let states = self.0 / state_bytes.max(1);
        if states == 0 {
            return Err(ConfigError::new(
                ConfigErrorKind::ZoneSize,
                format!("zone size {self} holds no state; a state needs {state_bytes} bytes"),
            ));
        }
        u32::try_from(states).map_err(|_| {
            ConfigError::new(
                ConfigErrorKind::ZoneSize,
                format!("zone size {self} is too large"),
            )
        })
    }
}

impl fmt::Display for ZoneSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1 << 30) {
            write!(f, "{}g", b >> 30)
        } else if b != 0 && b.is_multiple_of(1 << 20) {
            write!(f, "{}m", b >> 20)
        } else if b != 0 && b.is_multiple_of(1 << 10) {
            write!(f, "{}k", b >> 10)
        } else {
            write!(f, "{b}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_powers_of_1024_in_either_case() {
        assert_eq!(ZoneSize::parse("64k").map(|s| s.bytes()), Ok(65_536));
        assert_eq!(ZoneSize::parse("64K").map(|s| s.bytes()), Ok(65_536));
        assert_eq!(ZoneSize::parse("1M").map(|s| s.bytes()), Ok(1 << 20));
        assert_eq!(ZoneSize::parse("2g").map(|s| s.bytes()), Ok(2 << 30));
        assert_eq!(ZoneSize::parse("1000").map(|s| s.bytes()), Ok(1000));
    }

    #[test]
    fn malformed_sizes_are_refused() {
        for bad in [
            "",
            "m",
            "-1m",
            "1.5m",
            "10mb",
            " 1m",
            "99999999999999999999",
            "18014398509481984g",
        ] {
            assert!(ZoneSize::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_size_that_holds_no_state_is_an_error() {
        assert!(ZoneSize::from_bytes(127)
            .validate_for(REQ_STATE_BYTES)
            .is_err());
        assert_eq!(
            ZoneSize::from_bytes(128).validate_for(REQ_STATE_BYTES),
            Ok(1)
        );
        assert!(ZoneSize::from_bytes(63)
            .validate_for(CONN_STATE_BYTES)
            .is_err());
        assert_eq!(
            ZoneSize::from_bytes(64).validate_for(CONN_STATE_BYTES),
            Ok(1)
        );
        assert!(ZoneSize::from_bytes(0)
            .validate_for(CONN_STATE_BYTES)
            .is_err());
    }

    #[test]
    fn zones_over_four_gib_are_refused() {
        assert!(ZoneSize::parse("5g")
            .and_then(|s| s.validate_for(REQ_STATE_BYTES))
            .is_err());
        assert!(ZoneSize::parse("4g")
            .and_then(|s| s.validate_for(REQ_STATE_BYTES))
            .is_ok());
    }

    #[test]
    fn display_uses_the_largest_exact_unit() {
        assert_eq!(ZoneSize::mebibytes(10).to_string(), "10m");
        assert_eq!(ZoneSize::kibibytes(64).to_string(), "64k");
        assert_eq!(ZoneSize::from_bytes(1000).to_string(), "1000");
    }
}
