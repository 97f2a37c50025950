//! The replay's progress bar: bytes read of the log's size, lines per
//! second and time left, drawn on standard error only when it is a
//! terminal (a pipe or a file gets nothing extra).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Lines between two updates: the bar costs nothing measurable.
pub(super) const EVERY: u64 = 1 << 14;

/// A progress bar on the terminal.
#[derive(Debug)]
pub(super) struct Progress {
    bar: ProgressBar,
    started: Instant,
}

impl Progress {
    /// A bar for a log of `total` bytes, when standard error is a terminal.
    pub(super) fn on_terminal(total: u64) -> Option<Self> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
        let style = ProgressStyle::with_template(
            "{wide_bar} {binary_bytes}/{binary_total_bytes}, {msg}, {eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message("0 lines/s");
        bar.enable_steady_tick(Duration::from_millis(250));
        Some(Progress {
            bar,
            started: Instant::now(),
        })
    }

    /// `bytes` read and `lines` replayed so far.
    pub(super) fn update(&self, bytes: u64, lines: u64) {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        self.bar.set_position(bytes);
        self.bar
            .set_message(format!("{:.0} lines/s", lines as f64 / secs));
    }

    /// Removes the bar, before the report is written.
    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
