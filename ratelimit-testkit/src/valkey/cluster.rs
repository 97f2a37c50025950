//! A Valkey Cluster of N primaries on loopback ports.

use std::time::{Duration, Instant};

use super::process::{free_port_for, Process};
use super::resp::command;

/// A local cluster: `cluster-enabled yes`, `cluster-require-full-coverage
/// no`, the slots split evenly with `CLUSTER ADDSLOTSRANGE`, joined with
/// `CLUSTER MEET`. Every node is killed on drop.
#[derive(Debug)]
pub struct ValkeyCluster {
    nodes: Vec<Process>,
    ports: Vec<u16>,
}

impl ValkeyCluster {
    /// Starts `primaries` nodes and waits until every one says
    /// `cluster_state:ok` and knows every slot.
    ///
    /// # Errors
    ///
    /// When a node cannot be started or the cluster does not form in 20 s.
    pub fn start(primaries: usize) -> Result<Self, String> {
        let primaries = primaries.max(1);
        let mut nodes = Vec::new();
        for _ in 0..primaries {
            let port = free_port_for(true)?;
            let extra: Vec<String> = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &format!("nodes-{port}.conf"),
                "--cluster-require-full-coverage",
                "no",
                "--cluster-node-timeout",
                "2000",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            nodes.push(Process::spawn(port, &extra)?);
        }
        let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
        let per = 16384 / primaries;
        for (i, &port) in ports.iter().enumerate() {
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
        let cluster = Self { nodes, ports };
        cluster.wait_ok()?;
        Ok(cluster)
    }

    fn wait_ok(&self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let ready = self.ports.iter().all(|&p| {
                let info = command(p, &["CLUSTER", "INFO"]).unwrap_or_default();
                info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{}", self.ports.len()))
                    && info.contains("cluster_slots_assigned:16384")
            });
            if ready {
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(20) {
                return Err("the cluster did not reach cluster_state:ok in 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The URL of node `i`.
    pub fn url(&self, i: usize) -> String {
        format!(
            "redis://127.0.0.1:{}",
            self.ports[i.min(self.ports.len() - 1)]
        )
    }

    /// Every node's URL.
    pub fn urls(&self) -> Vec<String> {
        (0..self.ports.len()).map(|i| self.url(i)).collect()
    }

    /// The port of node `i`.
    pub fn port(&self, i: usize) -> u16 {
        self.ports[i.min(self.ports.len() - 1)]
    }

    /// The index of the node serving `slot` (slots are split evenly).
    pub fn node_of_slot(&self, slot: u16) -> usize {
        let per = 16384 / self.ports.len();
        (slot as usize / per).min(self.ports.len() - 1)
    }

    /// Kills node `i` (its slots become unserved; the others keep theirs).
    pub fn kill(&mut self, i: usize) {
        if let Some(n) = self.nodes.get_mut(i) {
            n.kill();
        }
    }
}
