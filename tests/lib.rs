//! Cross-crate integration tests, against a real valkey-server where they need one.
//!
//! The tests live in `tests/tests/*.rs`, one file per concern:
//!
//! | file | what it shows |
//! | --- | --- |
//! | `aggregate.rs` | 4 instances x 64 clients on one Valkey never admit more than the limit, for every algorithm, and through the tower layer over TCP (two servers); a control shows the check catches per-pod counters |
//! | `cluster_changes.rs` | a Valkey Cluster changing under 4 instances x 64 clients: a third of the slots migrated (MOVED / ASK followed once, every check answered and run once, the slot map follows), a primary killed (fail modes during the gap, the promoted replica serves within a second of its promotion, lost counts measured), a planned `CLUSTER FAILOVER` (nothing lost) |
//! | `faults.rs` | Valkey killed and restarted on the same port, unreachable, paused (SIGSTOP), slow, one cluster primary down, and the tower layer over HTTP: bounded latency, fail modes, breaker and probes, shared counts after recovery, no retries |
//! | `hostile_http.rs` | hostile bytes over raw TCP through the tower layer: answered, keyed right, bounded stores |
//!
//! Every test spawns its own `valkey-server` (see `scripts/install-valkey.sh`
//! and `VALKEY_SERVER`); without one they fail with the harness's message,
//! they never skip. Traffic goes to 127.0.0.1 only, every test stops by
//! itself, and the suite takes about two minutes on 2 cores.
//!
//! `hostile_http::invalid_utf8_query_values_are_keyed_apart` fails on
//! purpose until query values are keyed on their decoded bytes (see its
//! doc comment).
//!
//! This library holds what they share ([`support`]).
#![forbid(unsafe_code)]

pub mod support;
