//! The scenarios' factory for the core's in-memory backend.

use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::backend::MemoryBackend;

use super::{Backends, Outage, Probe};

/// The in-memory backend: a fresh store each time; two "instances" share
/// one store; an outage is a [`Probe`] in front of it, taken down.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryBackends;

impl Backends for MemoryBackends {
    async fn fresh(&self) -> Arc<dyn Backend> {
        Arc::new(MemoryBackend::default())
    }

    async fn pair(&self) -> [Arc<dyn Backend>; 2] {
        let shared: Arc<dyn Backend> = Arc::new(MemoryBackend::default());
        [shared.clone(), shared]
    }

    async fn breakable(&self) -> (Arc<dyn Backend>, Box<dyn Outage>) {
        let probe = Arc::new(Probe::new(Arc::new(MemoryBackend::default())));
        (probe.clone(), Box::new(probe))
    }
}
