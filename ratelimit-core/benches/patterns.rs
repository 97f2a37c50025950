//! The worst time per request of `matches` patterns on a 16 KiB path (the
//! longest `ratelimit-tower` lets through), over generated patterns: the
//! same generator as the `expr::pattern` proptest (`src/expr/pattern_gen.rs`,
//! groups nested three deep with alternations and nested counted
//! repetitions up to 60), plus the patterns of issue 27.8. Each pattern
//! that loads is run as an expression (`Expression::matches`) on every
//! long value of the generator, `reps` times, the fastest of which counts
//! (a run that other processes preempt only gets slower); the figure is the
//! slowest request so measured. Target: under 1 ms. The process exits with
//! an error when it is not met.
//!
//! `cargo bench -p ratelimit-core --bench patterns -- [patterns=2000] [reps=5]`
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use ratelimit_core::{Expression, RequestAttrs};

#[path = "../src/expr/pattern_gen.rs"]
#[allow(dead_code, unreachable_pub)]
mod pattern_gen;

const TARGET: Duration = Duration::from_millis(1);

/// `name=value` from the arguments, or `default`.
fn arg(name: &str, default: usize) -> usize {
    std::env::args()
        .filter_map(|a| a.strip_prefix(&format!("{name}=")).map(str::to_owned))
        .find_map(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The expression of `pattern` on the path, escaped for its string.
fn expression(pattern: &str) -> String {
    let escaped = pattern.replace('\\', "\\\\").replace('"', "\\\"");
    format!(r#"http.request.uri.path matches "{escaped}""#)
}

/// The fastest of `reps` runs of `f`: a run that other processes preempt
/// only gets slower, so the fastest is the estimate of a quiet machine.
fn fastest(reps: usize, mut f: impl FnMut() -> bool) -> Duration {
    (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let (count, reps) = (arg("patterns", 2000), arg("reps", 5));
    let mut runner = TestRunner::deterministic();
    let strategy = pattern_gen::pattern();
    let mut patterns: Vec<String> = [
        r"(?:[a-z]{1,60}){1,16}z",
        r"(?:a{1,60}){1,16}b",
        r"^(?:/[a-z0-9_-]{1,60}){1,16}/?$",
    ]
    .map(str::to_owned)
    .to_vec();
    for _ in 0..count {
        patterns.push(strategy.new_tree(&mut runner).expect("a pattern").current());
    }
    let requests: Vec<RequestAttrs> = pattern_gen::long_values()
        .into_iter()
        .map(|v| RequestAttrs::new([192, 0, 2, 1].into()).with_path(v))
        .collect();
    let (mut loaded, mut worst, mut worst_pattern) = (0, Duration::ZERO, String::new());
    let (mut slowest_load, mut slowest_pattern) = (Duration::ZERO, String::new());
    for pattern in &patterns {
        let start = Instant::now();
        let parsed = Expression::parse(&expression(pattern));
        if start.elapsed() > slowest_load {
            (slowest_load, slowest_pattern) = (start.elapsed(), pattern.clone());
        }
        let Ok(expr) = parsed else { continue };
        loaded += 1;
        for req in &requests {
            let took = fastest(reps, || expr.matches(black_box(req)));
            if took > worst {
                (worst, worst_pattern) = (took, pattern.clone());
            }
        }
    }
    println!(
        "{loaded} of {} patterns loaded; slowest load {slowest_load:?} ({slowest_pattern:?}); \
         worst request on a 16 KiB path {worst:?} ({worst_pattern:?}); target {TARGET:?}",
        patterns.len()
    );
    if worst >= TARGET {
        eprintln!("over the target");
        std::process::exit(1);
    }
}
