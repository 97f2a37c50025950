//! A Valkey Cluster on loopback ports: N primaries, optionally with
//! replicas. Resharding is in `reshard.rs`, failover in `failover.rs`.

use std::time::{Duration, Instant};

use super::process::{free_port_for, Process};
use super::resp::command;
use super::topology::{parse_nodes, NodeInfo};

/// A local cluster: `cluster-enabled yes`, `cluster-require-full-coverage
/// no`, the slots split evenly over the primaries with `CLUSTER
/// ADDSLOTSRANGE`, joined with `CLUSTER MEET`, replicas attached with
/// `CLUSTER REPLICATE`. Nodes `0..primaries` are the primaries; node
/// `primaries + i` is the replica of primary `i` (with one replica each).
/// Every node is killed on drop.
#[derive(Debug)]
pub struct ValkeyCluster {
    pub(crate) nodes: Vec<Process>,
    pub(crate) ports: Vec<u16>,
    pub(crate) ids: Vec<String>,
    pub(crate) primaries: usize,
}

impl ValkeyCluster {
    /// Starts `primaries` nodes (no replicas, `cluster-node-timeout` 2 s)
    /// and waits until every one says `cluster_state:ok` and knows every
    /// slot.
    ///
    /// # Errors
    ///
    /// When a node cannot be started or the cluster does not form in 20 s.
    pub fn start(primaries: usize) -> Result<Self, String> {
        Self::start_with(primaries, 0, Duration::from_millis(2000))
    }

    /// Starts `primaries` primaries with `replicas` replicas each and
    /// `cluster-node-timeout` of `node_timeout` (a replica is promoted a
    /// few node time-outs after its primary dies), and waits until the
    /// cluster is ok, every node knows every other, and every replica is
    /// in sync with its primary.
    ///
    /// # Errors
    ///
    /// When a node cannot be started or the cluster does not form in 30 s.
    pub fn start_with(
        primaries: usize,
        replicas: usize,
        node_timeout: Duration,
    ) -> Result<Self, String> {
        let primaries = primaries.max(1);
        let total = primaries * (1 + replicas);
        let mut nodes = Vec::new();
        for _ in 0..total {
            nodes.push(spawn_node(node_timeout)?);
        }
        let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
        let ids = ports
            .iter()
            .map(|&p| command(p, &["CLUSTER", "MYID"]))
            .collect::<Result<Vec<_>, _>>()?;
        let per = 16384 / primaries;
        for (i, &port) in ports[..primaries].iter().enumerate() {
            let first = i * per;
            let last = if i + 1 == primaries {
                16383
            } else {
                first + per - 1
            };
            command(
                port,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &first.to_string(),
                    &last.to_string(),
                ],
            )?;
        }
        for &port in &ports[1..] {
            command(
                port,
                &["CLUSTER", "MEET", "127.0.0.1", &ports[0].to_string()],
            )?;
        }
        let cluster = Self {
            nodes,
            ports,
            ids,
            primaries,
        };
        let within = Duration::from_secs(30);
        cluster.wait_until("every node knows every other", within, |c| {
            c.ports
                .iter()
                .all(|&p| c.info(p).contains(&format!("cluster_known_nodes:{total}")))
        })?;
        for r in primaries..total {
            let primary = &cluster.ids[r % primaries];
            command(cluster.ports[r], &["CLUSTER", "REPLICATE", primary])?;
        }
        cluster.wait_until("cluster_state:ok, replicas in sync", within, |c| {
            c.ports.iter().enumerate().all(|(i, &p)| {
                let info = c.info(p);
                let ok = info.contains("cluster_state:ok")
                    && info.contains("cluster_slots_assigned:16384");
                ok && (i < primaries
                    || command(p, &["INFO", "replication"])
                        .unwrap_or_default()
                        .contains("master_link_status:up"))
            })
        })?;
        Ok(cluster)
    }

    fn info(&self, port: u16) -> String {
        command(port, &["CLUSTER", "INFO"]).unwrap_or_default()
    }

    /// Polls `ready` every 50 ms until it holds, at most `within`.
    pub(crate) fn wait_until(
        &self,
        what: &str,
        within: Duration,
        ready: impl Fn(&Self) -> bool,
    ) -> Result<Duration, String> {
        let start = Instant::now();
        loop {
            if ready(self) {
                return Ok(start.elapsed());
            }
            if start.elapsed() > within {
                return Err(format!("cluster: not {what} within {within:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The URL of node `i`.
    pub fn url(&self, i: usize) -> String {
        format!("redis://127.0.0.1:{}", self.port(i))
    }

    /// Every node's URL (replicas included).
    pub fn urls(&self) -> Vec<String> {
        (0..self.ports.len()).map(|i| self.url(i)).collect()
    }

    /// The port of node `i`.
    pub fn port(&self, i: usize) -> u16 {
        self.ports[i.min(self.ports.len() - 1)]
    }

    /// The node id of node `i`.
    pub fn id(&self, i: usize) -> &str {
        &self.ids[i.min(self.ids.len() - 1)]
    }

    /// How many primaries the cluster started with.
    pub fn primaries(&self) -> usize {
        self.primaries
    }

    /// The index of the primary serving `slot` in the initial layout
    /// (slots split evenly); see [`owner_of`](Self::owner_of) for the
    /// live one.
    pub fn node_of_slot(&self, slot: u16) -> usize {
        let per = 16384 / self.primaries;
        (slot as usize / per).min(self.primaries - 1)
    }

    /// What the first node still answering says of the cluster.
    ///
    /// # Errors
    ///
    /// When no node answers.
    pub fn nodes_view(&self) -> Result<Vec<NodeInfo>, String> {
        let mut last = String::from("no node");
        for (i, &p) in self.ports.iter().enumerate() {
            if self.nodes[i].pid().is_none() {
                continue;
            }
            match command(p, &["CLUSTER", "NODES"]) {
                Ok(text) => return Ok(parse_nodes(&text)),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The node (index) serving `slot` now, by the cluster's own view.
    pub fn owner_of(&self, slot: u16) -> Option<usize> {
        let view = self.nodes_view().ok()?;
        let owner = view.iter().find(|n| n.primary && n.serves(slot))?;
        self.ports.iter().position(|&p| p == owner.port)
    }

    /// Kills node `i` (SIGKILL; its slots become unserved until a replica
    /// takes over).
    pub fn kill(&mut self, i: usize) {
        if let Some(n) = self.nodes.get_mut(i) {
            n.kill();
        }
    }
}

/// One cluster node on a free port; another port if that one was taken
/// meanwhile (tests starting servers in parallel).
fn spawn_node(node_timeout: Duration) -> Result<Process, String> {
    let mut last = String::new();
    for _ in 0..5 {
        let port = free_port_for(true)?;
        let extra: Vec<String> = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            &format!("nodes-{port}.conf"),
            "--cluster-require-full-coverage",
            "no",
            "--cluster-node-timeout",
            &node_timeout.as_millis().to_string(),
            // A replica may take over however long it was cut off.
            "--cluster-replica-validity-factor",
            "0",
            "--repl-diskless-sync-delay",
            "0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        match Process::spawn(port, &extra) {
            Ok(p) => return Ok(p),
            Err(e) => last = e,
        }
    }
    Err(last)
}
