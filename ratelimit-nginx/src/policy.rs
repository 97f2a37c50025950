//! What the `limit_req` and `limit_conn` lists of a level share: the
//! limits bound to their zones, the status of a refusal, the dry run and
//! the log level ([`Bound`]), how they are bound, and the public accessors
//! both policy types have (`policy_accessors!`).

use std::sync::Arc;

use super::error::{ConfigError, ConfigErrorKind, Span};
use super::status::LogLevel;

/// A level's list of one module, bound to its zones.
#[derive(Debug, Clone)]
pub(crate) struct Bound<L> {
    pub(crate) limits: Arc<[L]>,
    pub(crate) status: u16,
    pub(crate) dry_run: bool,
    pub(crate) log_level: LogLevel,
}

/// The module's settings of a level: its refusal status, dry run and log level.
pub(crate) type Settings = (u16, bool, LogLevel);

impl<L> Bound<L> {
    /// Binds each limit directive of a level to its zone, in order.
    /// `directive` is `limit_req` or `limit_conn`; an unknown zone is an
    /// error at the directive's position.
    pub(crate) fn bind<D, Z>(
        directives: &[D],
        directive: &str,
        (status, dry_run, log_level): Settings,
        name_and_span: impl Fn(&D) -> (&str, Option<Span>),
        zone: impl Fn(&str) -> Option<Arc<Z>>,
        limit: impl Fn(&D, Arc<Z>) -> L,
    ) -> Result<Self, ConfigError> {
        let mut limits = Vec::with_capacity(directives.len());
        for d in directives {
            let (name, span) = name_and_span(d);
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
}

/// The accessors both policy types have, over their `bound` field (a
/// [`Bound`] of limits with a `zone` field); `$directive` names the module.
macro_rules! policy_accessors {
    ($policy:ident, $zone:ident, $directive:literal) => {
        impl $policy {
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
