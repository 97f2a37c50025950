//! Cluster slots: the key hash slot, `CLUSTER SLOTS` replies, redirects.

use super::*;

#[test]
fn slots_match_the_cluster_spec() {
    // From the Valkey Cluster specification and `CLUSTER KEYSLOT`.
    assert_eq!(crc16(b"123456789"), 0x31C3);
    assert_eq!(slot(b"foo"), 12182);
    assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
    assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
    assert_eq!(slot(b"{}x"), crc16(b"{}x") % 16384);
}

#[test]
fn parses_a_slots_reply() {
    let node = |port| {
        Value::Array(vec![
            Value::BulkString(b"127.0.0.1".to_vec()),
            Value::Int(port),
            Value::BulkString(b"id".to_vec()),
        ])
    };
    let v = Value::Array(vec![
        Value::Array(vec![Value::Int(0), Value::Int(8191), node(7000)]),
        Value::Array(vec![Value::Int(8192), Value::Int(16383), node(7001)]),
    ]);
    let map = SlotMap::parse(&v).expect("parses");
    assert_eq!(map.node_of(0).map(String::as_str), Some("127.0.0.1:7000"));
    assert_eq!(
        map.node_of(16383).map(String::as_str),
        Some("127.0.0.1:7001")
    );
    assert!(SlotMap::parse(&Value::Nil).is_err());
}

#[test]
fn replicas_in_a_slots_reply_are_not_primaries() {
    let node = |port| {
        Value::Array(vec![
            Value::BulkString(b"127.0.0.1".to_vec()),
            Value::Int(port),
            Value::BulkString(format!("id{port}").into_bytes()),
            Value::Map(vec![]),
        ])
    };
    let v = Value::Array(vec![
        Value::Array(vec![Value::Int(0), Value::Int(99), node(7000), node(7100)]),
        Value::Array(vec![
            Value::Int(100),
            Value::Int(16383),
            node(7001),
            node(7101),
            node(7201),
        ]),
    ]);
    let map = SlotMap::parse(&v).expect("parses");
    assert_eq!(map.nodes, vec!["127.0.0.1:7000", "127.0.0.1:7001"]);
    assert_eq!(map.node_of(99).map(String::as_str), Some("127.0.0.1:7000"));
    assert_eq!(map.node_of(100).map(String::as_str), Some("127.0.0.1:7001"));
}

fn reply(raw: &str) -> Value {
    redis::parse_redis_value(raw.as_bytes()).expect("a RESP reply")
}

#[test]
fn redirects_name_their_node() {
    let moved = reply("-MOVED 3999 127.0.0.1:6381\r\n");
    assert_eq!(
        redirect(&moved, "127.0.0.1:6380"),
        Some(Redirect {
            ask: false,
            addr: "127.0.0.1:6381".into()
        })
    );
    let ask = reply("-ASK 3999 10.0.0.2:7000\r\n");
    assert_eq!(
        redirect(&ask, "127.0.0.1:6380"),
        Some(Redirect {
            ask: true,
            addr: "10.0.0.2:7000".into()
        })
    );
    // An unknown endpoint: the host of the node that replied.
    // An IPv6 node, written without brackets, is put in them.
    let v6 = reply("-MOVED 3999 ::1:6381\r\n");
    assert_eq!(
        redirect(&v6, "[::1]:6380").map(|r| r.addr),
        Some("[::1]:6381".into())
    );
    let bare_v6 = reply("-MOVED 1 :7002\r\n");
    assert_eq!(
        redirect(&bare_v6, "[fd00::2]:7000").map(|r| r.addr),
        Some("[fd00::2]:7002".into())
    );
    let bare = reply("-MOVED 1 :7002\r\n");
    assert_eq!(
        redirect(&bare, "10.1.1.1:7000").map(|r| r.addr),
        Some("10.1.1.1:7002".into())
    );
    for other in [
        "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
        "-CLUSTERDOWN The cluster is down\r\n",
        "-MOVED garbage\r\n",
        "-MOVED 1 127.0.0.1:notaport\r\n",
        "+OK\r\n",
    ] {
        assert_eq!(redirect(&reply(other), "127.0.0.1:1"), None, "{other}");
    }
    assert!(is_stale("MOVED") && is_stale("CLUSTERDOWN") && is_stale("READONLY"));
    assert!(!is_stale("ASK") && !is_stale("TRYAGAIN"));
}

/// `CLUSTER SLOTS` names an IPv6 node without brackets; the map keeps it
/// in a form a URL takes, and a port out of range is an error.
#[test]
fn ipv6_nodes_in_a_slots_reply_are_bracketed() {
    let range = |host: &[u8], port| {
        Value::Array(vec![
            Value::Int(0),
            Value::Int(16383),
            Value::Array(vec![Value::BulkString(host.to_vec()), Value::Int(port)]),
        ])
    };
    let map = SlotMap::parse(&Value::Array(vec![range(b"fd00::1", 7000)])).expect("parses");
    assert_eq!(map.nodes, vec!["[fd00::1]:7000"]);
    assert!(SlotMap::parse(&Value::Array(vec![range(b"fd00::1", 70_000)])).is_err());
}
