//! nginx-compatible `limit_req` / `limit_conn`: zones, arithmetic and the directive parser.
//!
//! Paste nginx lines, or build the same values in Rust:
//!
//! * [`NginxConfig`] holds the zones (`limit_req_zone`, `limit_conn_zone`)
//!   and the top-level settings; [`Level`] holds the limit directives of a
//!   site or location (`limit_req`, `limit_conn`, `*_status`, `*_dry_run`,
//!   `*_log_level`), inheriting what it does not set.
//! * [`ZoneRegistry`] keeps the zones of the process by name; loading a
//!   configuration gives [`Zones`], and a reload keeps the counts of a zone
//!   whose name, size, key and rate are unchanged.
//! * [`LimitReqPolicy::check`] applies a level's `limit_req` list to a
//!   request with nginx's arithmetic (milli-requests, milliseconds; see
//!   [`arith`]); [`LimitConnPolicy::acquire`] counts a request in progress
//!   until its [`ConnPermit`] is dropped.
//!
//! Zones live in preallocated memory: a limit_req zone holds `size / 128`
//! states and a limit_conn zone `size / 64`, each keyed by the fixed-size
//! digest of its key, so the memory used never exceeds the configured size.
//! Time is injected as milliseconds; the crate does no I/O and never waits:
//! the tower layer in `ratelimit-tower` sleeps for [`ReqDecision::delay`].
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::nginx::{Level, LimitReqStatus, NginxConfig, ZoneRegistry};
//! use ratelimit_core::{Clock, ManualClock, RequestAttrs};
//! use std::time::Duration;
//!
//! let config = NginxConfig::parse(
//!     "limit_req_zone $client_ip zone=perip:10m rate=10r/s;\n\
//!      limit_conn_zone $client_ip zone=conns:10m;",
//! )?;
//! let zones = ZoneRegistry::new().load(&config)?;
//! let login = zones.limit_req(&Level::parse("limit_req zone=perip burst=2 nodelay; limit_req_status 429;")?)?;
//!
//! let clock = ManualClock::new(1_767_225_600_000);
//! let guess = RequestAttrs::new("203.0.113.7".parse().unwrap()).with_path("/wp-login.php");
//! for _ in 0..3 {
//!     assert_eq!(login.check(&guess, clock.now_ms()).status(), Some(LimitReqStatus::Passed));
//! }
//! let fourth = login.check(&guess, clock.now_ms());
//! assert_eq!(fourth.rejected().map(|r| r.status()), Some(429));
//! // 10r/s drains one request every 100 ms.
//! clock.advance(Duration::from_millis(100));
//! assert!(login.check(&guess, clock.now_ms()).rejected().is_none());
//! # Ok::<(), ratelimit_core::nginx::ConfigError>(())
//! ```

pub mod arith;
mod config;
mod conn_policy;
mod conn_zone;
mod directive;
mod error;
mod key;
mod level;
mod lexer;
mod log;
mod normalize;
mod parser;
mod rate;
mod registry;
mod req_policy;
mod req_zone;
mod size;
mod status;
mod table;
mod zone_spec;

#[cfg(test)]
mod tests;

pub use config::{NginxConfig, NginxConfigBuilder, ParseOptions};
pub use conn_policy::{ConnDecision, ConnPermit, LimitConnPolicy};
pub use conn_zone::LimitConnZone;
pub use directive::{Delay, LimitConnDirective, LimitReqDirective};
pub use error::{ConfigError, ConfigErrorKind, Span};
pub use key::{KeySource, KeyTemplate, KeyVar, CREDENTIAL_HEADERS};
pub use level::{Level, LevelBuilder, DEFAULT_STATUS};
pub use log::LOG_TARGET;
pub use normalize::{normalize_host, normalize_path};
pub use rate::Rate;
pub use registry::{ZoneRegistry, Zones};
pub use req_policy::{LimitReqPolicy, ReqDecision};
pub use req_zone::LimitReqZone;
pub use size::{ZoneSize, CONN_STATE_BYTES, MAX_ZONE_BYTES, REQ_STATE_BYTES};
pub use status::{LimitConnStatus, LimitKind, LimitRejected, LimitReqStatus, LogLevel};
pub use zone_spec::{ZoneKind, ZoneSpec};
