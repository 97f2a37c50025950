//! What a cluster node says of the cluster: `CLUSTER NODES`, parsed.

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node's id.
    pub id: String,
    /// Its client port.
    pub port: u16,
    /// A primary (`master`), else a replica.
    pub primary: bool,
    /// Flagged `fail` (or `fail?`, only suspected).
    pub failed: bool,
    /// A replica's primary id.
    pub primary_id: Option<String>,
    /// The slot ranges it serves (inclusive).
    pub slots: Vec<(u16, u16)>,
}

impl NodeInfo {
    /// Whether it serves `slot`.
    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| a <= slot && slot <= b)
    }
}

/// Parses a `CLUSTER NODES` reply; lines it cannot read are skipped.
pub fn parse_nodes(text: &str) -> Vec<NodeInfo> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<NodeInfo> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 8 {
        return None;
    }
    // ip:port@cport[,hostname]
    let port = f[1].split('@').next()?.rsplit_once(':')?.1.parse().ok()?;
    let flags: Vec<&str> = f[2].split(',').collect();
    let primary = flags.contains(&"master");
    let failed = flags.iter().any(|&x| x == "fail" || x == "fail?");
    let primary_id = (f[3] != "-").then(|| f[3].to_string());
    let slots = f[8..]
        .iter()
        .filter(|s| !s.starts_with('['))
        .filter_map(|s| match s.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => {
                let x = s.parse().ok()?;
                Some((x, x))
            }
        })
        .collect();
    Some(NodeInfo {
        id: f[0].to_string(),
        port,
        primary,
        failed,
        primary_id,
        slots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_primaries_replicas_and_slots() {
        let text = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-99 200 [300->-b2]
b2 127.0.0.1:7001@17001 master,fail - 0 0 2 connected 100-199
c3 127.0.0.1:7002@17002,host slave a1 0 0 1 connected
garbage";
        let nodes = parse_nodes(text);
        assert_eq!(nodes.len(), 3);
        assert!(nodes[0].primary && !nodes[0].failed);
        assert_eq!(nodes[0].slots, vec![(0, 99), (200, 200)]);
        assert!(nodes[0].serves(200) && !nodes[0].serves(300));
        assert!(nodes[1].failed);
        assert_eq!(nodes[2].port, 7002);
        assert_eq!(nodes[2].primary_id.as_deref(), Some("a1"));
        assert!(!nodes[2].primary);
    }
}
