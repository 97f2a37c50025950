//! Cross-crate integration tests, against a real valkey-server where they need one.
//!
//! The tests live in `tests/tests/*.rs`, one file per concern:
//!
//! | file | what it shows |
//! | --- | --- |
//! | `aggregate_algorithms.rs` | 4 instances x 64 clients on one Valkey never admit more than the limit, for every algorithm; a control shows the check catches per-pod counters |
//! | `aggregate_http.rs` | the same through the tower layer over TCP (two servers) |
//! | `cluster_changes.rs` | a Valkey Cluster changing under 4 instances x 64 clients: a third of the slots migrated (MOVED / ASK followed once, every check answered and run once, the slot map follows), a primary killed (fail modes during the gap, the promoted replica serves within a second of its promotion, lost counts measured), a planned `CLUSTER FAILOVER` (nothing lost) |
//! | `faults_server.rs` | Valkey killed and restarted on the same port, paused (SIGSTOP), slow: bounded latency, fail modes, breaker and probes, shared counts after recovery, no retries |
//! | `faults_breaker.rs` | Valkey unreachable: the breaker opens after five failures and probes once a second, alone and under load |
//! | `faults_cluster.rs` | one cluster primary down: only its keys fail, by fail mode |
//! | `faults_http.rs` | Valkey down behind the tower layer over HTTP: answers by fail mode, within the bound |
//! | `hostile_bytes.rs` | hostile bytes over raw TCP through the tower layer (huge, repeated, not UTF-8, 1 MiB claims): answered, keyed right, bounded stores |
//! | `hostile_forwarded.rs` | odd and invalid forwarded addresses behind trusted proxies: keyed on the right address |
//! | `hostile_floods.rs` | key-rotation floods: bounded stores |
//! | `grpc_answers.rs` | a tonic server behind the layer, a tonic client over loopback: `RESOURCE_EXHAUSTED` with pushback, `RetryInfo` and `RateLimit` metadata, `UNAVAILABLE` when configured, `INTERNAL` naming the fix without an address, `INVALID_ARGUMENT` for a missing key and for metadata too large; a rule on `grpc.method`; the forwarded client keyed behind a trusted proxy |
//! | `grpc_streams.rs` | server, client and bidirectional streams refused at the call; the per-message recipe (keyed API) inside a client stream |
//! | `grpc_budget.rs` | an HTTP route and a gRPC method share one count (memory; two instances on Valkey); a unary gRPC call charged after its response |
//!
//! Every test that needs Valkey spawns its own `valkey-server` (see
//! `scripts/install-valkey.sh` and `VALKEY_SERVER`); without one they fail
//! with the harness's message, they never skip. Traffic goes to 127.0.0.1 only, every test stops by
//! itself, and the suite takes about two minutes on 2 cores.
//!
//! `hostile_bytes::invalid_utf8_query_values_are_keyed_apart` fails on
//! purpose until query values are keyed on their decoded bytes (see its
//! doc comment).
//!
//! This library holds what they share ([`support`]): the fleets, sites and
//! checks of each theme, beside the load, records and bounds they use.
#![forbid(unsafe_code)]

pub mod support;
