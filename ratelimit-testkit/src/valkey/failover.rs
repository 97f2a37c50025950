//! Failover: a replica taking over its primary's slots, after the primary
//! died (automatic, within a few `cluster-node-timeout`s) or on request
//! (`CLUSTER FAILOVER`).

use std::time::Duration;

use super::cluster::ValkeyCluster;
use super::resp::command;

impl ValkeyCluster {
    /// The index of a replica of primary node `primary`, by the cluster's
    /// own view.
    pub fn replica_of(&self, primary: usize) -> Option<usize> {
        let id = self.id(primary).to_string();
        let view = self.nodes_view().ok()?;
        let replica = view
            .iter()
            .find(|n| !n.primary && n.primary_id.as_deref() == Some(id.as_str()))?;
        self.ports.iter().position(|&p| p == replica.port)
    }

    /// Whether node `i` says it is a primary (`ROLE`).
    pub fn is_primary(&self, i: usize) -> bool {
        command(self.port(i), &["ROLE"]).is_ok_and(|r| r.starts_with("master"))
    }

    /// Waits until node `replica` is a primary serving slots and every
    /// live node agrees, at most `within`; returns how long it took.
    /// Blocking: call it from `spawn_blocking` under a runtime.
    ///
    /// # Errors
    ///
    /// When it is not promoted in time.
    pub fn wait_promoted(&self, replica: usize, within: Duration) -> Result<Duration, String> {
        let port = self.port(replica);
        self.wait_until("the replica promoted", within, |c| {
            c.is_primary(replica)
                && c.ports.iter().enumerate().all(|(i, &p)| {
                    c.nodes[i].pid().is_none()
                        || command(p, &["CLUSTER", "NODES"]).is_ok_and(|t| {
                            super::topology::parse_nodes(&t)
                                .iter()
                                .any(|n| n.port == port && n.primary && !n.slots.is_empty())
                        })
                })
        })
    }

    /// Asks replica `replica` to take over from its primary: `CLUSTER
    /// FAILOVER` (coordinated with a live primary, no write lost), or with
    /// `force`, `CLUSTER FAILOVER FORCE` (without the primary's agreement).
    ///
    /// # Errors
    ///
    /// When the replica refuses.
    pub fn failover(&self, replica: usize, force: bool) -> Result<(), String> {
        let mut args = vec!["CLUSTER", "FAILOVER"];
        if force {
            args.push("FORCE");
        }
        command(self.port(replica), &args).map(|_| ())
    }
}
