//! Reads pasted nginx lines into a [`NginxConfig`] or a [`Level`].
//!
//! Errors name the line, the column and the directive; no input panics.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{Level, NginxConfig};
//!
//! let config = NginxConfig::parse(
//!     "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s; # per client\n\
//!      limit_req_status 429;",
//! )
//! .unwrap();
//! assert_eq!(config.top().limit_req_status(), 429);
//! let location = Level::parse("limit_req zone=one burst=5 nodelay;").unwrap();
//! assert!(config.check_level(&location).is_ok());
//! let err = Level::parse("limit_req zone=one burst=x;").unwrap_err();
//! assert_eq!(err.to_string(), "line 1, column 20: limit_req: invalid burst value \"burst=x\"");
//! ```

use super::config::{NginxConfig, ParseOptions};
use super::directive::{LimitConnDirective, LimitReqDirective};
use super::error::{ConfigError, ConfigErrorKind, Span};
use super::key::KeyTemplate;
use super::level::{check_status, Level};
use super::lexer::{directives, Directive};
use super::rate::Rate;
use super::size::ZoneSize;
use super::status::LogLevel;
use super::zone_spec::ZoneSpec;

impl NginxConfig {
    /// Reads zone definitions and top-level limit settings.
    ///
    /// # Errors
    ///
    /// The first error, with its line, column and directive.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        Self::parse_with(text, &ParseOptions::default())
    }

    /// Reads a configuration with options (such as more redacted headers).
    ///
    /// # Errors
    ///
    /// The first error, with its line, column and directive.
    pub fn parse_with(text: &str, options: &ParseOptions) -> Result<Self, ConfigError> {
        let mut config = NginxConfig::default();
        for d in directives(text)? {
            read(&d, Some(&mut config.zones), &mut config.top, options)
                .map_err(|e| e.in_directive(&d.name))?;
        }
        config.validate()?;
        Ok(config)
    }
}

impl Level {
    /// Reads the limit directives of one level, such as a location's.
    ///
    /// # Errors
    ///
    /// The first error, with its line, column and directive; zone
    /// definitions are only allowed at the top level.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let mut level = Level::default();
        for d in directives(text)? {
            read(&d, None, &mut level, &ParseOptions::default())
                .map_err(|e| e.in_directive(&d.name))?;
        }
        Ok(level)
    }
}

fn read(
    d: &Directive,
    zones: Option<&mut Vec<ZoneSpec>>,
    level: &mut Level,
    options: &ParseOptions,
) -> Result<(), ConfigError> {
    match d.name.as_str() {
        "limit_req_zone" | "limit_conn_zone" => {
            let Some(zones) = zones else {
                return Err(error(
                    ConfigErrorKind::NotAllowedHere,
                    "is only allowed at the top level",
                    d.span,
                ));
            };
            zones.push(zone(d, options)?);
            Ok(())
        }
        "limit_req" => level.push_limit_req(limit_req(d)?.at(d.span)),
        "limit_conn" => {
            let [(zone, _), (n, n_span)] = args::<2>(d)?;
            let max = number(n).ok_or_else(|| {
                invalid(format!("invalid number of connections \"{n}\""), *n_span)
            })?;
            level.push_limit_conn(LimitConnDirective::new(zone.as_str(), max).at(d.span))
        }
        "limit_req_status" => set_once(&mut level.limit_req_status, status(d)?, d),
        "limit_conn_status" => set_once(&mut level.limit_conn_status, status(d)?, d),
        "limit_req_dry_run" => set_once(&mut level.limit_req_dry_run, flag(d)?, d),
        "limit_conn_dry_run" => set_once(&mut level.limit_conn_dry_run, flag(d)?, d),
        "limit_req_log_level" => set_once(&mut level.limit_req_log_level, log_level(d)?, d),
        "limit_conn_log_level" => set_once(&mut level.limit_conn_log_level, log_level(d)?, d),
        other => Err(error(
            ConfigErrorKind::UnknownDirective,
            &format!("unknown directive \"{other}\""),
            d.span,
        )),
    }
}

fn zone(d: &Directive, options: &ParseOptions) -> Result<ZoneSpec, ConfigError> {
    let is_req = d.name == "limit_req_zone";
    let expected = if is_req { 3 } else { 2 };
    if d.args.len() != expected {
        return Err(arguments(d));
    }
    let (key_text, key_span) = &d.args[0];
    let key = KeyTemplate::parse_with_redact(key_text, &options.redact_headers)
        .map_err(|e| e.at(Some(*key_span)))?;
    let (mut name_size, mut rate) = (None, None);
    for (arg, span) in &d.args[1..] {
        if let Some(value) = arg.strip_prefix("zone=") {
            let bad = || invalid(format!("invalid zone size \"{arg}\""), *span);
            let (name, size) = value.split_once(':').ok_or_else(bad)?;
            let size = ZoneSize::parse(size).map_err(|_| bad())?;
            name_size = Some((name.to_owned(), size));
        } else if let (true, Some(value)) = (is_req, arg.strip_prefix("rate=")) {
            rate = Some(
                Rate::parse(value)
                    .map_err(|_| invalid(format!("invalid rate \"{arg}\""), *span))?,
            );
        } else {
            return Err(invalid(format!("invalid parameter \"{arg}\""), *span));
        }
    }
    let missing = |what: &str| {
        error(
            ConfigErrorKind::Arguments,
            &format!("must have \"{what}\" parameter"),
            d.span,
        )
    };
    let (name, size) = name_size.ok_or_else(|| missing("zone"))?;
    let spec = if is_req {
        ZoneSpec::limit_req(name, key, size, rate.ok_or_else(|| missing("rate"))?)
    } else {
        ZoneSpec::limit_conn(name, key, size)
    };
    Ok(spec.at(d.span))
}

fn limit_req(d: &Directive) -> Result<LimitReqDirective, ConfigError> {
    // Up to four, so that "nodelay" with "delay=" gets its own message.
    if d.args.is_empty() || d.args.len() > 4 {
        return Err(arguments(d));
    }
    let (mut zone, mut burst, mut delay, mut nodelay) = (None, None, None, false);
    for (arg, span) in &d.args {
        if let Some(name) = arg.strip_prefix("zone=") {
            zone = Some(name);
        } else if let Some(n) = arg.strip_prefix("burst=") {
            burst = Some(
                number(n)
                    .ok_or_else(|| invalid(format!("invalid burst value \"{arg}\""), *span))?,
            );
        } else if let Some(n) = arg.strip_prefix("delay=") {
            delay = Some(
                number(n)
                    .ok_or_else(|| invalid(format!("invalid delay value \"{arg}\""), *span))?,
            );
        } else if arg == "nodelay" {
            nodelay = true;
        } else {
            return Err(invalid(format!("invalid parameter \"{arg}\""), *span));
        }
    }
    let zone = zone.ok_or_else(|| {
        error(
            ConfigErrorKind::Arguments,
            "must have \"zone\" parameter",
            d.span,
        )
    })?;
    let mut limit = LimitReqDirective::new(zone);
    if let Some(n) = burst {
        limit = limit.with_burst(n);
    }
    if nodelay {
        limit = limit.with_nodelay();
    }
    if let Some(n) = delay {
        limit = limit.with_delay(n);
    }
    Ok(limit)
}

fn args<const N: usize>(d: &Directive) -> Result<&[(String, Span); N], ConfigError> {
    <&[(String, Span); N]>::try_from(d.args.as_slice()).map_err(|_| arguments(d))
}

fn status(d: &Directive) -> Result<u16, ConfigError> {
    let [(value, span)] = args::<1>(d)?;
    let code = value
        .parse::<u16>()
        .ok()
        .filter(|_| value.bytes().all(|b| b.is_ascii_digit()));
    code.ok_or_else(|| invalid(format!("invalid number \"{value}\""), *span))
        .and_then(|c| check_status(c).map_err(|e| e.at(Some(*span))))
}

fn flag(d: &Directive) -> Result<bool, ConfigError> {
    match args::<1>(d)? {
        [(v, _)] if v.eq_ignore_ascii_case("on") => Ok(true),
        [(v, _)] if v.eq_ignore_ascii_case("off") => Ok(false),
        [(v, span)] => Err(invalid(
            format!("invalid value \"{v}\", it must be \"on\" or \"off\""),
            *span,
        )),
    }
}

fn log_level(d: &Directive) -> Result<LogLevel, ConfigError> {
    let [(value, span)] = args::<1>(d)?;
    LogLevel::parse(value).map_err(|e| e.at(Some(*span)))
}

fn set_once<T>(slot: &mut Option<T>, value: T, d: &Directive) -> Result<(), ConfigError> {
    if slot.is_some() {
        return Err(error(ConfigErrorKind::Duplicate, "is duplicate", d.span));
    }
    *slot = Some(value);
    Ok(())
}

/// A positive whole number that fits in 32 bits, digits only (nginx's `ngx_atoi`).
fn number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn arguments(d: &Directive) -> ConfigError {
    error(
        ConfigErrorKind::Arguments,
        "invalid number of arguments",
        d.span,
    )
}

fn invalid(message: String, span: Span) -> ConfigError {
    error(ConfigErrorKind::InvalidValue, &message, span)
}

fn error(kind: ConfigErrorKind, message: &str, span: Span) -> ConfigError {
    ConfigError::new(kind, message).at(Some(span))
}
