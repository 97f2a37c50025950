//! The fleet's control channel in Valkey: [`ValkeyControl`] implements the
//! core's [`Control`] for a fleet, and [`ValkeyControl::follow`] keeps one
//! instance's limiter on what is published.
//!
//! The published set, its history, the switches, the lifts, the rules
//! added at run time and the registry of instances are keys under the
//! backend's prefix, `<prefix>control{ctl}:<name>` (one hash tag); the
//! operator's CSRF secret is `<prefix>operator{ctl}:csrf`, out of the
//! followers' reach. A follower reads and applies each part of that state
//! on its own, so a key of the wrong type stops only its part, and is
//! named in the instance's log and report. Each change is
//! announced on the channel `<prefix>control{ctl}:notice`; each follower
//! also polls, so a missed notice, a reconnect or a Valkey restart still
//! converges. The guide's "Running a fleet" chapter has the bounds, the
//! figures and the ACL set-up.
//!
//! On a Valkey Cluster the control follows `MOVED` to the node serving
//! its keys' slot, and starts again from its seed nodes
//! ([`ValkeyControl::open_cluster`]) when that node fails: a failover needs
//! no restart of the fleet.
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

mod added;
mod apply;
mod codec;
mod conn;
mod follow;
mod hold;
mod keytype;
mod ops;
mod own_thread;
mod pace;
mod parts;
mod registry;
mod scripts;
mod temporary;
mod view;

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::Limiter;

use crate::url::normalize_url;
use crate::Error;
use conn::Conn;
pub use follow::{FollowConfig, Follower};
pub use pace::FLOOD_GAP;
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
    /// `rl:` by default). Connects on first use. On a Valkey Cluster, any
    /// node will do: a `MOVED` reply leads the control to the node serving
    /// its keys' slot; for calls to survive that node's failure, give more
    /// seeds with [`open_cluster`](Self::open_cluster).
    ///
    /// # Errors
    ///
    /// An invalid URL.
    pub fn open(url: &str, prefix: &str) -> Result<Self, Error> {
        Self::open_cluster([url], prefix)
    }

    /// The control on a Valkey Cluster, starting from the seed nodes
    /// `urls` (tried in order, as for [`open`](Self::open)), for keys under
    /// `prefix`. Calls go to the node serving the control keys' slot (the
    /// hash tag `ctl`), found by following `MOVED`; when it cannot be
    /// reached, the next call starts again from the seeds, so after a
    /// failover the control reaches the promoted replica by itself. While
    /// the slot moves between nodes, `ASK` is followed and `TRYAGAIN`
    /// waited out within the call's time-out. Each node tried may take
    /// the call's time-out ([`DEFAULT_TIMEOUT`]) to fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_valkey::control::ValkeyControl;
    ///
    /// let seeds = ["valkey://10.0.0.1:6379", "valkey://10.0.0.2:6379", "valkey://10.0.0.3:6379"];
    /// let control = ValkeyControl::open_cluster(seeds, "rl:")?;
    /// assert_eq!(control.channel(), "rl:control{ctl}:notice");
    /// # Ok::<(), ratelimit_valkey::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// An invalid URL, or no URL at all.
    pub fn open_cluster<I, S>(urls: I, prefix: &str) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut seeds = Vec::new();
        for url in urls {
            let url = url.as_ref();
            let normalized = normalize_url(url)?;
            redis::Client::open(normalized.as_str()).map_err(|e| Error::InvalidUrl {
                url: url.into(),
                reason: e.to_string(),
            })?;
            seeds.push(normalized);
        }
        if seeds.is_empty() {
            return Err(Error::InvalidSetting {
                name: "open_cluster",
                reason: "no seed node",
            });
        }
        Ok(Self {
            conn: Arc::new(Conn::new(seeds, DEFAULT_TIMEOUT)),
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
