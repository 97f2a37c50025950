//! What the `limit_req` and `limit_conn` lists of a level share: the
//! limits bound to their zones, the status of a refusal, the dry run and
//! the log level ([`Bound`]), how they are bound, and the public accessors
//! both policy types have (`policy_accessors!`).

use std::sync::Arc;

use super::directive::{LimitConnDirective, LimitReqDirective};
use super::error::{ConfigError, ConfigErrorKind, Span};
use super::level::Level;
use super::status::{LimitKind, LimitRejected, LogLevel};

/// A level's list of one module, bound to its zones.
#[derive(Debug, Clone)]
pub(crate) struct Bound<L> {
    pub(crate) limits: Arc<[L]>,
    pub(crate) status: u16,
    pub(crate) dry_run: bool,
    pub(crate) log_level: LogLevel,
}

/// A limit directive of either module, as a level holds it.
pub(crate) trait Directive: Sized {
    /// `limit_req` or `limit_conn`.
    const NAME: &'static str;
    /// The zone named, and where.
    fn zone_at(&self) -> (&str, Option<Span>);
    /// The module's directives of `level`, and its refusal status, dry run
    /// and log level there.
    fn of(level: &Level) -> (&[Self], u16, bool, LogLevel);
}

/// `impl Directive` for `$directive`, over `Level`'s `$name` methods.
macro_rules! directive {
    ($directive:ident, $name:ident, $status:ident, $dry_run:ident, $log_level:ident) => {
        impl Directive for $directive {
            const NAME: &'static str = stringify!($name);

            fn zone_at(&self) -> (&str, Option<Span>) {
                (self.zone(), self.span())
            }

            fn of(level: &Level) -> (&[Self], u16, bool, LogLevel) {
                let (status, dry_run) = (level.$status(), level.$dry_run());
                (level.$name(), status, dry_run, level.$log_level())
            }
        }
    };
}

directive!(
    LimitReqDirective,
    limit_req,
    limit_req_status,
    limit_req_dry_run,
    limit_req_log_level
);
directive!(
    LimitConnDirective,
    limit_conn,
    limit_conn_status,
    limit_conn_dry_run,
    limit_conn_log_level
);

impl<L> Bound<L> {
    /// Binds each `D` directive of `level` to its zone, in order, with
    /// `limit`; an unknown zone is an error at the directive's position.
    pub(crate) fn bind<D: Directive, Z>(
        level: &Level,
        zone: impl Fn(&str) -> Option<Arc<Z>>,
        limit: impl Fn(&D, Arc<Z>) -> L,
    ) -> Result<Self, ConfigError> {
        let (directives, status, dry_run, log_level) = D::of(level);
        let directive = D::NAME;
        let mut limits = Vec::with_capacity(directives.len());
        for d in directives {
            let (name, span) = d.zone_at();
            let Some(zone) = zone(name) else {
                return Err(ConfigError::new(
                    ConfigErrorKind::UnknownZone,
                    format!("unknown {directive}_zone \"{name}\""),
                )
                .in_directive(directive)
                .at(span));
            };
            limits.push(limit(d, zone));
        }
        Ok(Self {
            limits: limits.into(),
            status,
            dry_run,
            log_level,
        })
    }

    /// The refusal of a request by `zone`: `None` in a dry run.
    pub(crate) fn refusal(
        &self,
        kind: LimitKind,
        zone: &str,
        exhausted: bool,
    ) -> Option<LimitRejected> {
        (!self.dry_run).then(|| LimitRejected::new(kind, zone, self.status, exhausted))
    }
}

/// The accessors both policy types have, over their `bound` field (a
/// [`Bound`] of `$limit`s, each with a `zone` field and made by
/// `$limit::new(&directive, zone)`), and `resolve`, which binds a level's
/// list; `$directive` names the module.
macro_rules! policy_accessors {
    ($policy:ident, $zone:ident, $limit:ident, $directive:literal) => {
        impl $policy {
            pub(crate) fn resolve(
                level: &$crate::Level,
                zone: impl Fn(&str) -> Option<std::sync::Arc<$zone>>,
            ) -> Result<Self, $crate::ConfigError> {
                let bound = $crate::policy::Bound::bind(level, zone, $limit::new)?;
                Ok(Self { bound })
            }

            /// The same policy, as a dry run when `on` (as in a shadow site).
            #[must_use]
            pub fn with_dry_run(mut self, on: bool) -> Self {
                self.bound.dry_run = on;
                self
            }

            #[doc = concat!("True when the level has no `", $directive, "`.")]
            pub fn is_empty(&self) -> bool {
                self.bound.limits.is_empty()
            }

            /// The status of a refused request.
            pub fn status_code(&self) -> u16 {
                self.bound.status
            }

            /// True when nothing is refused (or delayed), only counted.
            pub fn is_dry_run(&self) -> bool {
                self.bound.dry_run
            }

            #[doc = concat!("The zones, in the order of the `", $directive, "` lines.")]
            pub fn zones(&self) -> impl Iterator<Item = &std::sync::Arc<$zone>> + '_ {
                self.bound.limits.iter().map(|l| &l.zone)
            }
        }
    };
}

pub(crate) use policy_accessors;
