//! Error-log events of the limits, at the configured level, with
//! `limit_error = "excess"` or `limit_error = "zone_exhausted"`.
//!
//! Refusals are written at `limit_req_log_level` / `limit_conn_log_level`
//! (`error` by default), delays one level lower, and `notice` at INFO.
//! Every event has the target [`LOG_TARGET`], `ratelimit::nginx`, and the
//! field `zone`: filter them with a directive such as
//! `RUST_LOG=ratelimit::nginx=warn`.

use std::fmt;

use super::status::LogLevel;

/// The tracing target of every limit event.
pub(crate) const LOG_TARGET: &str = "ratelimit::nginx";

/// An excess in 1/1000 requests, shown as nginx shows it: `1.500`.
struct Excess(u64);

impl fmt::Display for Excess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

macro_rules! event_at {
    ($level:expr, $($rest:tt)+) => {
        match $level {
            LogLevel::Error => tracing::error!(target: LOG_TARGET, $($rest)+),
            LogLevel::Warn => tracing::warn!(target: LOG_TARGET, $($rest)+),
            LogLevel::Notice | LogLevel::Info => tracing::info!(target: LOG_TARGET, $($rest)+),
        }
    };
}

pub(crate) fn req_rejected(level: LogLevel, zone: &str, excess: u64, dry_run: bool) {
    event_at!(
        level,
        zone,
        excess = %Excess(excess),
        dry_run,
        limit_error = "excess",
        "limiting requests{}, excess: {} by zone \"{zone}\"",
        if dry_run { ", dry run" } else { "" },
        Excess(excess),
    );
}

pub(crate) fn req_delayed(level: LogLevel, zone: &str, excess: u64, dry_run: bool) {
    event_at!(
        level.delay_level(),
        zone,
        excess = %Excess(excess),
        dry_run,
        "delaying request{}, excess: {}, by zone \"{zone}\"",
        if dry_run { ", dry run" } else { "" },
        Excess(excess),
    );
}

pub(crate) fn conn_rejected(level: LogLevel, zone: &str, dry_run: bool) {
    event_at!(
        level,
        zone,
        dry_run,
        limit_error = "excess",
        "limiting connections{} by zone \"{zone}\"",
        if dry_run { ", dry run," } else { "" },
    );
}

pub(crate) fn zone_exhausted(level: LogLevel, module: &'static str, zone: &str, dry_run: bool) {
    metrics::counter!("ratelimit_nginx_zone_exhausted_total", "module" => module).increment(1);
    event_at!(
        level,
        zone,
        dry_run,
        limit_error = "zone_exhausted",
        "{module}: no free state in zone \"{zone}\"{}",
        if dry_run { ", dry run" } else { "" },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_is_shown_in_requests_with_three_decimals() {
        assert_eq!(Excess(1500).to_string(), "1.500");
        assert_eq!(Excess(7).to_string(), "0.007");
        assert_eq!(Excess(0).to_string(), "0.000");
    }
}
