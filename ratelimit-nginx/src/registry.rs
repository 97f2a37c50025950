//! The zones of a process, by name, and how a reload keeps their counts.
//!
//! A reload keeps the states of a zone whose name, kind, size, key and rate
//! are unchanged, and starts every other zone fresh. Zones that the new
//! configuration drops are forgotten (requests in progress keep theirs).
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{NginxConfig, ZoneRegistry};
//! use std::sync::Arc;
//!
//! let registry = ZoneRegistry::new();
//! let v1 = NginxConfig::parse("limit_req_zone $client_ip zone=one:1m rate=1r/s;").unwrap();
//! let v2 = NginxConfig::parse("limit_req_zone $client_ip zone=one:2m rate=1r/s;").unwrap();
//! let a = registry.load(&v1).unwrap();
//! let b = registry.load(&v1).unwrap();
//! let c = registry.load(&v2).unwrap();
//! assert!(Arc::ptr_eq(a.req_zone("one").unwrap(), b.req_zone("one").unwrap()));
//! assert!(!Arc::ptr_eq(b.req_zone("one").unwrap(), c.req_zone("one").unwrap()));
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::config::NginxConfig;
use super::conn_policy::LimitConnPolicy;
use super::conn_zone::LimitConnZone;
use super::error::ConfigError;
use super::level::Level;
use super::req_policy::LimitReqPolicy;
use super::req_zone::LimitReqZone;
use super::zone_spec::{ZoneKind, ZoneSpec};
use ratelimit_core::HashKey;

#[derive(Debug, Clone)]
enum AnyZone {
    Req(Arc<LimitReqZone>),
    Conn(Arc<LimitConnZone>),
}

impl AnyZone {
    fn new(spec: &ZoneSpec, hash_key: HashKey) -> Result<Self, ConfigError> {
        let zone = match spec.kind() {
            ZoneKind::Req(rate) => {
                LimitReqZone::new(spec.name(), spec.key().clone(), spec.size(), rate, hash_key)
                    .map(|z| Self::Req(Arc::new(z)))
            }
            ZoneKind::Conn => {
                LimitConnZone::new(spec.name(), spec.key().clone(), spec.size(), hash_key)
                    .map(|z| Self::Conn(Arc::new(z)))
            }
        };
        zone.map_err(|e| e.in_directive(spec.directive()).at(spec.span()))
    }

    /// Same kind, size, key and rate: the reload keeps the states.
    fn same_as(&self, spec: &ZoneSpec) -> bool {
        match (self, spec.kind()) {
            (Self::Req(z), ZoneKind::Req(rate)) => {
                z.size() == spec.size() && z.key() == spec.key() && z.rate() == rate
            }
            (Self::Conn(z), ZoneKind::Conn) => z.size() == spec.size() && z.key() == spec.key(),
            _ => false,
        }
    }
}

/// The zones of a process, shared by every configuration loaded into it.
#[derive(Debug, Default)]
pub struct ZoneRegistry {
    hash_key: HashKey,
    zones: Mutex<HashMap<String, AnyZone>>,
}

impl ZoneRegistry {
    /// An empty registry hashing keys with [`HashKey::DEFAULT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry hashing keys with `hash_key`.
    pub fn with_hash_key(hash_key: HashKey) -> Self {
        Self {
            hash_key,
            zones: Mutex::default(),
        }
    }

    /// The registry of this process.
    pub fn global() -> &'static ZoneRegistry {
        static GLOBAL: OnceLock<ZoneRegistry> = OnceLock::new();
        GLOBAL.get_or_init(ZoneRegistry::new)
    }

    /// Loads (or reloads) the zones of `config`.
    ///
    /// # Errors
    ///
    /// A zone whose memory cannot be reserved; the registry is then unchanged.
    pub fn load(&self, config: &NginxConfig) -> Result<Zones, ConfigError> {
        config.validate()?;
        let mut current = self.zones.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = HashMap::with_capacity(config.zones().len());
        for spec in config.zones() {
            let zone = match current.get(spec.name()) {
                Some(old) if old.same_as(spec) => old.clone(),
                _ => AnyZone::new(spec, self.hash_key)?,
            };
            next.insert(spec.name().to_owned(), zone);
        }
        let zones = Zones::new(&next, config.top().clone());
        *current = next;
        Ok(zones)
    }
}

/// The zones of one loaded configuration, and its top-level settings.
#[derive(Debug, Clone, Default)]
pub struct Zones {
    req: HashMap<String, Arc<LimitReqZone>>,
    conn: HashMap<String, Arc<LimitConnZone>>,
    top: Level,
}

impl Zones {
    fn new(zones: &HashMap<String, AnyZone>, top: Level) -> Self {
        let mut out = Zones {
            top,
            ..Zones::default()
        };
        for (name, zone) in zones {
            match zone {
                AnyZone::Req(z) => out.req.insert(name.clone(), Arc::clone(z)).map(|_| ()),
                AnyZone::Conn(z) => out.conn.insert(name.clone(), Arc::clone(z)).map(|_| ()),
            };
        }
        out
    }

    /// The limit_req zone called `name`.
    pub fn req_zone(&self, name: &str) -> Option<&Arc<LimitReqZone>> {
        self.req.get(name)
    }

    /// The limit_conn zone called `name`.
    pub fn conn_zone(&self, name: &str) -> Option<&Arc<LimitConnZone>> {
        self.conn.get(name)
    }

    /// The top-level settings, which every level inherits.
    pub fn top(&self) -> &Level {
        &self.top
    }

    /// The limit_req policy of `level`, after inheriting from the top level.
    ///
    /// # Errors
    ///
    /// A `limit_req` naming no limit_req zone, at its line.
    pub fn limit_req(&self, level: &Level) -> Result<LimitReqPolicy, ConfigError> {
        LimitReqPolicy::resolve(&level.inherit(&self.top), |name| {
            self.req.get(name).cloned()
        })
    }

    /// The limit_conn policy of `level`, after inheriting from the top level.
    ///
    /// # Errors
    ///
    /// A `limit_conn` naming no limit_conn zone, at its line.
    pub fn limit_conn(&self, level: &Level) -> Result<LimitConnPolicy, ConfigError> {
        LimitConnPolicy::resolve(&level.inherit(&self.top), |name| {
            self.conn.get(name).cloned()
        })
    }
}
