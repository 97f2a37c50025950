//! The scenarios' factory for the Valkey backend.

use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_valkey::ValkeyBackend;

use super::{Backends, Outage};
use crate::valkey::{injected, injected_with_prefix, ChaosProxy, ProxyMode, ValkeyServer};

/// The Valkey backend on a server of the harness, with the limiter's time
/// injected into the scripts: a fresh key prefix each time; two instances
/// are two backends (own connections) on one prefix; an outage is a
/// [`ChaosProxy`] in front of the server, switched to
/// [`ProxyMode::Down`].
#[derive(Debug)]
pub struct ValkeyBackends {
    server: ValkeyServer,
}

impl ValkeyBackends {
    /// On [`ValkeyServer::start`] (`VALKEY_URL`, or a spawned server).
    ///
    /// # Panics
    ///
    /// When no server can be had, with a message naming
    /// `scripts/install-valkey.sh`: the scenarios never skip.
    pub fn start() -> Self {
        Self {
            server: crate::valkey::server(),
        }
    }
}

/// A chaos proxy as an [`Outage`].
#[derive(Debug)]
struct ProxyOutage(ChaosProxy);

impl Outage for ProxyOutage {
    fn set_down(&self, down: bool) {
        let mode = if down {
            ProxyMode::Down
        } else {
            ProxyMode::Pass
        };
        self.0.set_mode(mode);
    }
}

impl Backends for ValkeyBackends {
    async fn fresh(&self) -> Arc<dyn Backend> {
        Arc::new(injected(self.server.url()).await)
    }

    async fn pair(&self) -> [Arc<dyn Backend>; 2] {
        let prefix = crate::unique("pair");
        let a: ValkeyBackend = injected_with_prefix(self.server.url(), &prefix).await;
        let b = injected_with_prefix(self.server.url(), &prefix).await;
        [Arc::new(a), Arc::new(b)]
    }

    async fn breakable(&self) -> (Arc<dyn Backend>, Box<dyn Outage>) {
        let url = self.server.url();
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let target = rest.split('/').next().unwrap_or(rest).to_owned();
        let proxy = ChaosProxy::start(target)
            .await
            .unwrap_or_else(|e| panic!("proxy: {e}"));
        let backend = injected(&proxy.url()).await;
        (Arc::new(backend), Box::new(ProxyOutage(proxy)))
    }
}
