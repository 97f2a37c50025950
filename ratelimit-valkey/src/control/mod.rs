//! The fleet's control channel in Valkey: [`ValkeyControl`] implements the
//! core's [`Control`] for a fleet, and [`ValkeyControl::follow`] keeps one
//! instance's limiter on what is published.
//!
//! The published set, its history, the switches, the lifts, the CSRF
//! secret and the registry of instances are keys under the backend's
//! prefix, `<prefix>control{ctl}:<name>` (one hash tag). Each change is
//! announced on the channel `<prefix>control{ctl}:notice`; each follower
//! also polls, so a missed notice, a reconnect or a Valkey restart still
//! converges. The guide's "Running a fleet" chapter has the bounds, the
//! figures and the ACL set-up.
//!
//! The control connects to one Valkey node (not a cluster's seed list):
//! point it at the node serving the control keys' slot.
//!
//! # Examples
//!
//! ```no_run
//! # async fn demo(limiter: ratelimit_core::Limiter) -> Result<(), Box<dyn std::error::Error>> {
//! use std::collections::BTreeMap;
//! use ratelimit_core::control::Control;
//! use ratelimit_valkey::control::{FollowConfig, ValkeyControl};
//!
//! let control = ValkeyControl::open("valkey://127.0.0.1:6379", "rl:")?.with_limiter(limiter.clone());
//! let follower = control.follow(limiter, FollowConfig::new("edge-1"));
//! let current = control.current().await?.map_or(0, |p| p.version);
//! control.publish(current, "[]", "alice: empty set", BTreeMap::new()).await?;
//! # drop(follower); Ok(()) }
//! ```

mod apply;
mod codec;
mod conn;
mod follow;
mod ops;
mod registry;
mod scripts;

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::Limiter;

use crate::url::normalize_url;
use crate::Error;
use conn::Conn;
pub use follow::{FollowConfig, Follower};
use scripts::Keys;

#[cfg(doc)]
use ratelimit_core::control::Control;

/// How long one control call may take by default: 1 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// An instance silent this long leaves the registry: 60 s.
pub const LIVE_FOR: Duration = Duration::from_secs(60);

/// The fleet's [`Control`] over Valkey. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ValkeyControl {
    conn: Arc<Conn>,
    keys: Arc<Keys>,
    scripts: Arc<Scripts>,
    limiter: Option<Limiter>,
}

#[derive(Debug)]
struct Scripts {
    publish: redis::Script,
    switch: redis::Script,
    lift: redis::Script,
    csrf: redis::Script,
    report: redis::Script,
    live: redis::Script,
}

impl ValkeyControl {
    /// The control at `url` (`redis://`, `valkey://`, with a user and
    /// password for an ACL user), for keys under `prefix` (the backend's,
    /// `rl:` by default). Connects on first use.
    ///
    /// # Errors
    ///
    /// An invalid URL.
    pub fn open(url: &str, prefix: &str) -> Result<Self, Error> {
        let normalized = normalize_url(url)?;
        let client = redis::Client::open(normalized).map_err(|e| Error::InvalidUrl {
            url: url.into(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            conn: Arc::new(Conn::new(client, DEFAULT_TIMEOUT)),
            keys: Arc::new(Keys::new(prefix)),
            scripts: Arc::new(Scripts {
                publish: redis::Script::new(scripts::PUBLISH),
                switch: redis::Script::new(scripts::SWITCH),
                lift: redis::Script::new(scripts::LIFT),
                csrf: redis::Script::new(scripts::CSRF),
                report: redis::Script::new(scripts::REPORT),
                live: redis::Script::new(scripts::LIVE),
            }),
            limiter: None,
        })
    }

    /// The limiter whose backend a lift resets (the shared state, once):
    /// needed by [`Control::lift`].
    #[must_use]
    pub fn with_limiter(mut self, limiter: Limiter) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// The name of the pub/sub channel of change notices.
    pub fn channel(&self) -> &str {
        &self.keys.channel
    }
}
