//! Every metric the workspace's crates emit, with its labels and meaning.
//!
//! Each crate keeps the catalogue of what it emits next to the code that
//! emits it (`ratelimit_core::Metric::CORE`, `ratelimit_tower::METRICS`,
//! `ratelimit_nginx::METRICS`, `ratelimit_valkey::METRICS`), with its own
//! `describe_metrics`, so a service that wants only Prometheus needs only
//! the crates it uses. [`METRICS`] is their union, the list
//! `docs/operators.md` documents (a test checks the crates' sources, this
//! list and that page agree); [`describe_metrics`] describes them all.

pub use ratelimit_core::{Metric, MetricKind as Kind};

/// The crates' catalogues, those of the crates whose feature is on.
const PARTS: &[&[Metric]] = &[
    ratelimit_core::Metric::CORE,
    #[cfg(feature = "tower")]
    ratelimit_tower::METRICS,
    #[cfg(feature = "nginx")]
    ratelimit_nginx::METRICS,
    #[cfg(feature = "valkey")]
    ratelimit_valkey::METRICS,
];

const LEN: usize = {
    let (mut n, mut part) = (0, 0);
    while part < PARTS.len() {
        n += PARTS[part].len();
        part += 1;
    }
    n
};

/// `PARTS`, one after the other.
const fn concat() -> [Metric; LEN] {
    let mut out = [PARTS[0][0]; LEN];
    let (mut part, mut at) = (0, 0);
    while part < PARTS.len() {
        let mut i = 0;
        while i < PARTS[part].len() {
            out[at] = PARTS[part][i];
            at += 1;
            i += 1;
        }
        part += 1;
    }
    out
}

/// Every metric, grouped by crate: core's, then tower's, nginx's and
/// valkey's (each with its feature, all on by default).
pub const METRICS: &[Metric] = &concat();

/// Registers every metric's help text (and the histogram's unit) on the
/// installed `metrics` recorder, and registers the counters without labels
/// at 0, so that they are scraped (and `rate()` and alerts work) before
/// their first event: call it once, after installing the recorder. A
/// service without the admin page calls each crate's `describe_metrics`
/// instead (`ratelimit_core::Metric::describe(Metric::CORE)`, `ratelimit_tower::describe_metrics` and so on).
///
/// # Examples
///
/// ```
/// // With a recorder installed (metrics-exporter-prometheus, for one):
/// ratelimit_admin::describe_metrics();
/// assert!(ratelimit_admin::METRICS.iter().all(|m| m.name.starts_with("ratelimit_")));
/// ```
pub fn describe_metrics() {
    ratelimit_core::Metric::describe(METRICS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_is_each_crates_catalogue_in_order() {
        let parts: Vec<&str> = PARTS
            .iter()
            .flat_map(|p| p.iter().map(|m| m.name))
            .collect();
        let all: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        assert_eq!(all, parts);
        for source in [
            "ratelimit-core",
            "ratelimit-tower",
            "ratelimit-nginx",
            "ratelimit-valkey",
        ] {
            assert!(METRICS.iter().any(|m| m.source == source), "{source}");
        }
    }
}
