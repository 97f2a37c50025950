//! [`ClusterState`]: a cluster's slot map and its nodes' connections, read
//! again when a node fails or answers MOVED.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ratelimit_core::backend::{BackendError, BackendErrorKind};

use super::{slot, Addr, SlotMap};
use crate::hashkey::FleetKey;
use crate::node::{Node, NodeFactory};

/// While a node fails to answer, the slot map is read at most this often.
const SUSPECT_EVERY: Duration = Duration::from_secs(1);

/// The cluster's slot map and its nodes' connections.
#[derive(Debug)]
pub(crate) struct ClusterState {
    pub(crate) map: RwLock<Arc<SlotMap>>,
    pub(crate) nodes: Mutex<HashMap<Addr, Node>>,
    pub(crate) factory: NodeFactory,
    pub(crate) stale: Arc<tokio::sync::Notify>,
    /// When a node's failure last asked for a slot map read.
    pub(crate) suspected: Mutex<Option<Instant>>,
}

impl ClusterState {
    /// The node at `addr`, connecting in the background from its first use.
    pub(crate) fn node(&self, addr: &str) -> Result<Node, BackendError> {
        let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = nodes.get(addr) {
            return Ok(n.clone());
        }
        let node = self.factory.node(addr).map_err(|e| {
            BackendError::new(
                BackendErrorKind::Connection,
                format!("valkey at {addr}: {e}"),
            )
        })?;
        nodes.insert(addr.to_string(), node.clone());
        Ok(node)
    }

    /// The nodes known now.
    pub(crate) fn nodes(&self) -> Vec<Node> {
        let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        nodes.values().cloned().collect()
    }

    pub(crate) fn map(&self) -> Arc<SlotMap> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A node failed to answer: its replica may have been promoted. Asks
    /// for a slot map read, at most once per [`SUSPECT_EVERY`].
    pub(crate) fn suspect(&self) {
        let now = Instant::now();
        let mut last = self.suspected.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| now.duration_since(t) >= SUSPECT_EVERY) {
            *last = Some(now);
            self.stale.notify_one();
        }
    }

    /// Reads `CLUSTER SLOTS` from the first node that answers, trying the
    /// connected ones first (a dead primary would hold the read up for the
    /// connect time-out).
    pub(crate) async fn refresh(&self) -> Result<(), String> {
        let mut addrs: Vec<Addr> = self.map().nodes.clone();
        for seed in &self.factory.seeds {
            if !addrs.contains(seed) {
                addrs.push(seed.clone());
            }
        }
        let connected: Vec<bool> = addrs
            .iter()
            .map(|a| self.node(a).is_ok_and(|n| n.is_connected()))
            .collect();
        let mut order: Vec<usize> = (0..addrs.len()).collect();
        order.sort_by_key(|&i| !connected[i]);
        let mut last = String::from("no node known");
        for addr in order.into_iter().map(|i| addrs[i].clone()) {
            let node = match self.node(&addr) {
                Ok(n) => n,
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            };
            let cmd = redis::cmd("CLUSTER").arg("SLOTS").to_owned();
            match node.command(&cmd, self.factory.connect_timeout).await {
                Ok(v) => {
                    let map = SlotMap::parse(&v).map_err(|e| node.says(e))?;
                    self.adopt(map);
                    return Ok(());
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Uses `map`: its primaries start connecting, nodes that are neither
    /// primaries nor seeds are dropped (their connections close).
    fn adopt(&self, map: SlotMap) {
        for addr in &map.nodes {
            if let Err(e) = self.node(addr) {
                tracing::warn!(error = %e, "cannot use a cluster node");
            }
        }
        {
            let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            nodes.retain(|a, _| map.nodes.contains(a) || self.factory.seeds.contains(a));
        }
        *self.map.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }

    /// Checks the fleet's hash key on the node serving its slot.
    pub(crate) async fn sync_key(&self, key: &FleetKey, name: &str) -> Result<(), String> {
        let map = self.map();
        let addr = map
            .node_of(slot(name.as_bytes()))
            .ok_or_else(|| format!("valkey cluster: no node serves {name}"))?;
        let node = self.node(addr).map_err(|e| e.to_string())?;
        key.sync(&node, name, self.factory.connect_timeout).await
    }
}
